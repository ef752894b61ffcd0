"""Where a scene's objects are, read once: the index the spatial relations ask.

:class:`SpatialIndex` reads a scene's positions, boxes and receptacle links on first use and
answers *candidate* questions: which objects may lie within a radius of a point, which boxes
overlap a box in (x, z), what rests on what. It knows no relation: :mod:`.relations` applies
its exact rules to the candidates, so an answer is the rule's to the bit.

A scene below :data:`NUMPY_FROM` objects is indexed in plain Python (a grid of cells): a check
of one room never imports numpy. A larger one reads its positions into a numpy array at once
and asks a vectorised pass, then a KD-tree (``scipy.spatial.cKDTree``) once several anchors
share the index; without scipy (it is optional) the vectorised pass answers every query, with
the same rows. :func:`indexed` shares one index among the calls of a block.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from operator import attrgetter, itemgetter, methodcaller
from typing import TYPE_CHECKING, Any

from bt_raider.perception.scene import SceneObject
from bt_raider.perception.values import MAX_MAGNITUDE, plain_xyz

if TYPE_CHECKING:  # numpy and scipy are imported where a large scene needs them
    import numpy as np

#: Scenes of at least this many objects are indexed with numpy (a vectorised radius query, a
#: KD-tree once several anchors share the index); smaller ones with a plain-Python grid, which
#: is as fast there (``python3 benchmarks/scale.py --crossover``) and keeps numpy's import
#: (0.1-0.2 s) out of a check of one room.
NUMPY_FROM = 250
#: Cell side (m) of the plain-Python grid, and the longest radius the index answers: wider than
#: the longest radius the relations ask (1.0 m) plus any rounding, so what lies within range of
#: a point lies in the point's cell or the eight around it.
CELL = 1.25
#: A radius query returns a superset this much wider (m), then the exact rule decides: a KD-tree
#: and ``math.hypot`` may round a distance on the boundary differently.
SLACK = 1e-9
#: Radius queries answer by one vectorised pass until this many were asked of one index; then a
#: KD-tree is built (worth it only when many anchors share the index).
_TREE_AFTER = 2

XYZ = tuple[float, float, float]
Box = tuple[XYZ, XYZ]


def xyz(obj: Any) -> XYZ:
    """An object's (person's, place's) position as plain floats, without numpy.

    The raw dict's in-range floats when it has them (the common case); else the object's own
    reader (``xyz``, or ``position`` for any other duck type), which names a malformed field.
    """
    raw = getattr(obj, "raw", None)
    if type(raw) is dict:
        plain = plain_xyz(raw.get("position"))
        if plain is not None:
            return plain
    point = getattr(obj, "xyz", None)
    pos = point if point is not None else obj.position
    return float(pos[0]), float(pos[1]), float(pos[2])


def corners(obj: Any) -> Box | None:
    """``(min, max)`` corners of an object's box as floats; None without a box (or a person)."""
    read = getattr(obj, "box_corners", None) or getattr(obj, "bbox", None)
    box = read() if read is not None else None
    if box is None:
        return None
    lo, hi = box
    return (float(lo[0]), float(lo[1]), float(lo[2])), (float(hi[0]), float(hi[1]), float(hi[2]))


def finite_box(box: Box) -> bool:
    """Whether every coordinate of both corners of ``box`` is a finite number."""
    return all(math.isfinite(v) for corner in box for v in corner)


def _kd_tree(xz: np.ndarray) -> Any:
    """A KD-tree over the ``(n, 2)`` positions ``xz``, or None when scipy is not installed.

    scipy is optional: the ``all`` extra installs it, and ``pddl`` and ``memory`` bring it with
    their own dependencies (ConfigSpace, sentence-transformers); the core does not. Without it
    the vectorised numpy pass answers every radius query: the same rows, slower when many
    anchors share one index.
    """
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        return None
    # Unbalanced, uncompacted: half the build time; the same points answer.
    return cKDTree(xz, balanced_tree=False, compact_nodes=False)


def _raws(objects: Sequence[Any]) -> list[dict[str, Any]] | None:
    """The scene's own objects' dicts, in order; None when any object is not a SceneObject
    (a duck type is read through its own attributes)."""
    if set(map(type, objects)) <= {SceneObject}:
        return list(map(attrgetter("raw"), objects))
    return None


def _batch_xyz(objects: Sequence[Any]) -> tuple[list[Any], list[Any], list[Any]] | None:
    """Every object's raw x, y, z (three lists, one C-level pass each) when all are floats,
    else None.

    The range is checked by the caller. Anything but a float (a whole number, a bool, a missing
    key, an object without a raw dict) leaves the batch to the object-by-object read.
    """
    try:
        ps = [o.raw["position"] for o in objects]
        xs = list(map(itemgetter("x"), ps))
        zs = list(map(itemgetter("z"), ps))
        try:
            ys = list(map(itemgetter("y"), ps))
        except KeyError:  # y is optional
            ys = [p.get("y", 0.0) for p in ps]
    except (AttributeError, KeyError, TypeError):
        return None
    if set(map(type, chain(xs, ys, zs))) <= {float}:
        return xs, ys, zs
    return None


class SpatialIndex:
    """One scene's positions, boxes and receptacle links, each read once, on first use.

    The scene must not change while the index is used (one check reads one scene): outside
    :func:`indexed`, :func:`index_of` gives a fresh index per call.

    Args:
        scene: the scene (anything with ``objects``).
        among: index only these objects (of ``scene``), in their order: the relations then
            answer about them alone and read nothing of any other object. Every object of the
            scene when None.
    """

    def __init__(self, scene: Any, among: Sequence[Any] | None = None) -> None:
        self.scene = scene
        self.objects: list[Any] = list(scene.objects if among is None else among)
        #: Whether this index holds only some of the scene's objects (``among``).
        self.partial = among is not None
        self.large = len(self.objects) >= NUMPY_FROM
        self._lock = threading.Lock()
        self._xs: list[float] | None = None
        self._zs: list[float] | None = None
        self._xz: np.ndarray | None = None
        self._xz_finite = True
        self._tree: Any = None
        self._no_tree = False  # scipy is missing: the numpy pass answers (not tried again)
        self._answers: dict[tuple[float, float, float], list[int]] = {}  # see expect()
        self._queries = 0
        self._cells: tuple[dict[tuple[int, int], list[int]], list[int]] | None = None
        self._corners: list[Box | None] | None = None
        self._finite_boxes = True
        self._boxes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._links: dict[str, list[int]] | None = None
        self._by_id: dict[str, list[int]] | None = None

    # ------------------------------------------------------------------ positions
    def coords(self) -> tuple[list[float], list[float]]:
        """Every object's x and z as floats, in scene order.

        Every coordinate (y too) must be a float within :data:`MAX_MAGNITUDE`, as
        ``SceneObject.position`` requires: a large scene checks the batch at once with numpy;
        anything else is read object by object, so a malformed position fails with the
        object's own error, as the rule would.
        """
        if self._xs is None or self._zs is None:
            batch = _batch_xyz(self.objects) if self.large else None
            if batch is not None:
                import numpy as np

                xyz3 = np.array(batch, dtype=float).reshape(3, -1)
                if (np.abs(xyz3) <= MAX_MAGNITUDE).all():
                    self._xz = np.ascontiguousarray(xyz3[[0, 2]].T)
                    self._xz_finite = True
                else:
                    batch = None
            if batch is None:
                rows = [xyz(o) for o in self.objects]
                batch = [r[0] for r in rows], [], [r[2] for r in rows]
            self._xs, self._zs = batch[0], batch[2]
        return self._xs, self._zs

    def _xz_array(self) -> np.ndarray | None:
        """``(n, 2)`` array of the x, z positions (large scenes); None when one is not finite
        (a duck-typed object's: the exact rule then meets it and refuses)."""
        xs, zs = self.coords()
        if self._xz is None:
            import numpy as np

            self._xz = np.array([xs, zs], dtype=float).reshape(2, -1).T.copy()
            self._xz_finite = bool(np.isfinite(self._xz).all())
        return self._xz if self._xz_finite else None

    def _grid(self) -> tuple[dict[tuple[int, int], list[int]], list[int]]:
        """Rows by :data:`CELL` cell of (x, z), and the rows whose position is not finite
        (always candidates, so the rule meets them and refuses)."""
        if self._cells is None:
            xs, zs = self.coords()
            grid: dict[tuple[int, int], list[int]] = {}
            always: list[int] = []
            floor = math.floor
            for i, (x, z) in enumerate(zip(xs, zs, strict=True)):
                if math.isfinite(x) and math.isfinite(z):
                    grid.setdefault((floor(x / CELL), floor(z / CELL)), []).append(i)
                else:
                    always.append(i)
            self._cells = (grid, always)
        return self._cells

    def within(self, cx: float, cz: float, radius: float) -> list[int] | range:
        """Rows of the objects that may lie within ``radius`` (m) of ``(cx, cz)``, in order.

        A superset: a small scene gives the nine grid cells around the point; a large one
        what lies within ``radius`` plus :data:`SLACK`, by a vectorised pass or a KD-tree (every
        row when a position is not finite).

        Raises:
            ValueError: for a radius of :data:`CELL` or more, or a centre that is not finite.
        """
        if not radius + SLACK < CELL:
            raise ValueError(f"radius {radius} m: the index answers below {CELL} m")
        if not (math.isfinite(cx) and math.isfinite(cz)):
            raise ValueError(f"centre ({cx}, {cz}) is not a finite point")
        if not self.large:
            grid, always = self._grid()
            gx, gz = math.floor(cx / CELL), math.floor(cz / CELL)
            rows = list(always)
            for i in (gx - 1, gx, gx + 1):
                for j in (gz - 1, gz, gz + 1):
                    rows += grid.get((i, j), ())
            rows.sort()
            return rows
        xz = self._xz_array()
        if xz is None:
            return range(len(self.objects))
        r = radius + SLACK
        with self._lock:
            self._queries += 1
            if self._tree is None and not self._no_tree and self._queries > _TREE_AFTER:
                self._tree = _kd_tree(xz)
                self._no_tree = self._tree is None
            tree = self._tree
        if tree is not None:
            answer = self._answers.get((cx, cz, radius))
            if answer is not None:
                return list(answer)
            return sorted(tree.query_ball_point((cx, cz), r))
        import numpy as np

        d2 = ((xz - np.array((cx, cz))) ** 2).sum(axis=1)
        return np.flatnonzero(d2 <= r * r).tolist()

    def expect(self, points: Sequence[tuple[float, float]], radius: float) -> None:
        """Radius queries about to be asked, one per point: a large scene answers them in one
        KD-tree pass now, and :meth:`within` reads each answer (the same rows it would find
        point by point). A hint only: other queries, or none of these, are answered as ever.
        """
        points = [(x, z) for x, z in points if math.isfinite(x) and math.isfinite(z)]
        if not self.large or len(points) <= _TREE_AFTER or not radius + SLACK < CELL:
            return
        xz = self._xz_array()
        if xz is None:
            return
        with self._lock:
            self._queries += len(points)
            if self._tree is None and not self._no_tree:
                self._tree = _kd_tree(xz)
                self._no_tree = self._tree is None
            tree = self._tree
        if tree is None:  # no scipy: within() answers each point by the numpy pass
            return
        found = tree.query_ball_point(points, radius + SLACK, return_sorted=True)
        for (x, z), rows in zip(points, found, strict=True):
            self._answers[(x, z, radius)] = rows

    def nearest(self, rows: list[int], cx: float, cz: float) -> list[int]:
        """Of ``rows``, those that may be the nearest to ``(cx, cz)`` (ties and rounding kept):
        all of them in a small scene, a vectorised shortlist in a large one."""
        xz = self._xz_array() if self.large else None
        if xz is None or not rows:
            return rows
        import numpy as np

        d2 = ((xz[rows] - np.array((cx, cz))) ** 2).sum(axis=1)
        bound = float(np.sqrt(d2.min())) + SLACK
        return [rows[j] for j in np.flatnonzero(np.sqrt(d2) <= bound)]

    # ------------------------------------------------------------------ boxes
    def boxes(self) -> list[Box | None] | None:
        """Every object's box corners (None without a box), in scene order; None when a box
        is not finite (the rule then refuses, naming it)."""
        if self._corners is None:
            found = [corners(o) for o in self.objects]
            self._finite_boxes = all(c is None or finite_box(c) for c in found)
            self._corners = found
        return self._corners if self._finite_boxes else None

    def overlapping(self, box: Box) -> list[int]:
        """Rows of the objects whose (finite) box overlaps ``box`` in x and z, in order."""
        found = self.boxes() or []
        (ylo, yhi) = box
        if not self.large:
            return [
                i
                for i, c in enumerate(found)
                if c is not None
                and c[0][0] < yhi[0]
                and ylo[0] < c[1][0]
                and c[0][2] < yhi[2]
                and ylo[2] < c[1][2]
            ]
        import numpy as np

        if self._boxes is None:
            none = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            has = np.array([c is not None for c in found], dtype=bool)
            both = np.array([c or none for c in found], dtype=float).reshape(-1, 2, 3)
            self._boxes = (has, both[:, 0], both[:, 1])
        has, lo, hi = self._boxes
        hit = has.copy()
        for k in (0, 2):
            hit &= (lo[:, k] < yhi[k]) & (ylo[k] < hi[:, k])
        return np.flatnonzero(hit).tolist()

    # ------------------------------------------------------------------ links
    def resting_on(self, y: Any) -> list[int]:
        """Rows of the objects X resting in or on Y (Y in X's ``parentReceptacles`` or X in
        Y's ``receptacleObjectIds``), in order.

        The parent links are read once (one pass over the raw dicts); Y's own child list is
        looked up by id only for a child whose parent link does not already say so (an index
        of some objects looks every child up: most of Y's children are not among them).
        """
        if not hasattr(y, "children"):
            return []
        found = set(self._parent_links().get(y.id, ()))
        children = y.children
        if children and self.partial:
            by_id = self._ids()
            for child in children:
                rows = by_id.get(child)
                if rows is not None:
                    found.update(rows)
        elif children:
            linked = {self.objects[i].id for i in found}
            missing = [c for c in children if c not in linked]
            if missing:
                by_id = self._ids()
                for child in missing:
                    found.update(by_id.get(child, ()))
        return sorted(found)

    def _ids(self) -> dict[str, list[int]]:
        """Rows by objectId, built on first use."""
        if self._by_id is None:
            by_id: dict[str, list[int]] = {}
            for i, o in enumerate(self.objects):
                by_id.setdefault(o.id, []).append(i)
            self._by_id = by_id
        return self._by_id

    def _parent_links(self) -> dict[str, list[int]]:
        """Rows by the receptacle their ``parentReceptacles`` names: one C-level pass over the
        objects' dicts (each object's own ``parents`` for a duck type)."""
        if self._links is None:
            raws = _raws(self.objects)
            if raws is not None:
                parents = list(map(methodcaller("get", "parentReceptacles"), raws))
            else:
                parents = [o.parents for o in self.objects]
            links: defaultdict[str, list[int]] = defaultdict(list)  # read with .get only
            for i, ps in enumerate(parents):
                if ps:
                    for parent in ps:
                        links[parent].append(i)
            self._links = links
        return self._links


# ---------------------------------------------------------------------- sharing
# id(scene) -> [scene, open blocks, the whole scene's index, indexes of some objects by their
# ids' key (see _among_key)].
_SCOPES: dict[int, list[Any]] = {}
_SCOPES_LOCK = threading.Lock()


def _among_key(among: Sequence[Any]) -> tuple[int, ...]:
    """The identity of a list of objects: what a block's indexes of some objects are kept by
    (the index holds the objects, so their ids stay theirs while it lives)."""
    return tuple(map(id, among))


@contextmanager
def indexed(scene: Any) -> Iterator[SpatialIndex]:
    """Share one :class:`SpatialIndex` of ``scene`` among every relation asked inside.

    A check grounding "the apple left of the bowl" asks the relation once per bowl; inside this
    block the scene is read and indexed once for all of them (and each list of objects the
    relations are asked ``among``, once per list). The scene must not change inside the block
    (a check reads one scene); blocks nest and may overlap across threads. Nothing is kept once
    the outermost block ends.

    Args:
        scene: the scene the relations are asked about.
    """
    key = id(scene)
    with _SCOPES_LOCK:
        entry = _SCOPES.get(key)
        if entry is None or entry[0] is not scene:
            entry = [scene, 0, SpatialIndex(scene), {}]
            _SCOPES[key] = entry
        entry[1] += 1
    try:
        yield entry[2]
    finally:
        with _SCOPES_LOCK:
            entry[1] -= 1
            if entry[1] == 0 and _SCOPES.get(key) is entry:
                del _SCOPES[key]


def shared_index(scene: Any, among: Sequence[Any] | None = None) -> SpatialIndex | None:
    """The index :func:`indexed` shares for ``scene`` (of ``among`` alone, when given), or None
    outside such a block."""
    entry = _SCOPES.get(id(scene))
    if entry is None or entry[0] is not scene:
        return None
    if among is None:
        return entry[2]
    key = _among_key(among)
    index = entry[3].get(key)
    if index is None:
        made = SpatialIndex(scene, among)  # reads nothing yet
        with _SCOPES_LOCK:
            index = entry[3].setdefault(key, made)
    return index


def index_of(scene: Any, among: Sequence[Any] | None = None) -> SpatialIndex:
    """The index :func:`indexed` shares for ``scene`` (of ``among`` alone, when given), else a
    fresh one."""
    index = shared_index(scene, among)
    return index if index is not None else SpatialIndex(scene, among)
