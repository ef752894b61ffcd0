"""``bt-raider fleet keys ...``: the keys of a signed fleet.

* ``keys new NAME... --dir DIR`` -- make an Ed25519 private key for each robot
  (``DIR/NAME.key``, mode 0600, in a folder of mode 0700) and add its public key to
  ``DIR/keyring.json``; an existing key is kept unless ``--force``;
* ``keys list --dir DIR`` -- the robots of the keyring and their key fingerprints;
* ``keys check NAME --dir DIR`` -- read NAME's private key and the keyring as a robot would:
  refused in one line when a file is unreadable, too open (a private key readable by group or
  others, a keyring they can change) or when the key does not match the keyring.

Give each robot its own ``NAME.key`` and every robot the same ``keyring.json``; a robot loads
them with :meth:`bt_raider.fleet.signing.FleetSecurity.load`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from bt_raider.commands import HELP
from bt_raider.errors import need


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``fleet`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "fleet",
        help=HELP["fleet"],
        description="Keys of a signed fleet: each robot signs what it sends with its own "
        "private key; every robot checks it against the team's keyring.",
    )
    groups = parser.add_subparsers(dest="fleet_command", metavar="GROUP")
    groups.required = True
    keys = groups.add_parser("keys", help="make, list and check the team's keys")
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    actions.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dir", required=True, type=Path, help="the team's keys folder")
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.set_defaults(run=run)

    p = actions.add_parser("new", help="make a private key per robot and add it to the keyring")
    p.add_argument("names", nargs="+", metavar="NAME", help="robot names")
    p.add_argument("--force", action="store_true", help="replace a robot's existing key")
    common(p)
    p = actions.add_parser("list", help="the keyring's robots and key fingerprints")
    common(p)
    p = actions.add_parser("check", help="load a robot's key and the keyring as the robot would")
    p.add_argument("name", metavar="NAME", help="the robot")
    common(p)


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider fleet keys ACTION``; exit status 0 (errors: one line, exit 2)."""
    need("fleet", "bt-raider fleet", modules=("cryptography",))
    from bt_raider.fleet.signing import KEYRING_FILE, FleetSecurity, Keyring, generate_keys

    folder: Path = args.dir
    if args.keys_command == "new":
        ring = generate_keys(folder, args.names, force=args.force)
        made = args.names
    elif args.keys_command == "list":
        ring, made = Keyring.load(folder / KEYRING_FILE), []
    else:
        ring, made = FleetSecurity.load(folder, args.name).keyring, [args.name]
    rows = {n: ring.fingerprint(n) for n in ring.names}
    if args.json:
        print(json.dumps({"dir": str(folder), "keys": rows, "robots": made}))
        return 0
    if args.keys_command == "new":
        for n in made:
            print(f"made {folder / (n + '.key')} (mode 0600)")
    elif args.keys_command == "check":
        print(f"{args.name}: private key matches the keyring ({rows[args.name]})")
    print(f"keyring {folder / KEYRING_FILE}: {len(rows)} robot(s)")
    for n, fp in rows.items():
        print(f"  {n:12s} {fp}")
    return 0
