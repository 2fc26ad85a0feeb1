#!/usr/bin/env python3
"""Write a synthetic serial-chain URDF of N links (N - 1 joints) to stdout or a file.

Used to measure the URDF loader on large inputs (docs/urdf.md, "Limits"): the
100,000-link chain is about 34 MB, 7 elements per link/joint pair, and must load
within the loader's caps. Not committed as a file: generate it when needed, e.g.

    scripts/gen-chain-urdf.py 100000 > /tmp/chain100k.urdf
    /usr/bin/time -v <program that calls plucker::load_urdf> /tmp/chain100k.urdf

--joint fixed writes the same document with fixed joints (the model is then one body
carrying N - 1 frames), which measures the loader alone, independently of the cost of
Model::add_body per movable joint.
"""
import argparse
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("links", type=int, help="number of links (>= 1)")
    p.add_argument("--joint", default="revolute", choices=["revolute", "continuous", "fixed"],
                   help="type of every joint (default revolute)")
    p.add_argument("-o", "--output", help="output file (default stdout)")
    args = p.parse_args()
    if args.links < 1:
        p.error("links must be >= 1")
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    w = out.write
    w('<?xml version="1.0"?>\n<robot name="chain%d">\n' % args.links)
    for i in range(args.links):
        # 4 elements per link: link, inertial, mass, inertia (COM on the link's axis).
        w('<link name="link%d"><inertial><mass value="1"/><inertia ixx="0.004" ixy="0" ixz="0" '
          'iyy="0.005" iyz="0" izz="0.002"/></inertial></link>\n' % i)
        if i + 1 < args.links:
            # 3 to 6 elements per joint: joint, parent, child (+ origin, axis, limit).
            axis = "0 0 1" if i % 2 == 0 else "0 1 0"
            extra = ""
            if args.joint != "fixed":
                extra = '<axis xyz="%s"/>' % axis
            if args.joint == "revolute":
                extra += '<limit lower="-3.14" upper="3.14" effort="100" velocity="10"/>'
            w('<joint name="joint%d" type="%s"><parent link="link%d"/><child link="link%d"/>'
              '<origin xyz="0.01 0 0.1" rpy="0.05 -0.03 0.02"/>%s</joint>\n'
              % (i + 1, args.joint, i, i + 1, extra))
    w("</robot>\n")
    if args.output:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
