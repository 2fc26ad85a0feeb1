#!/usr/bin/env python3
"""Write the seed corpus of fuzz_dynamics (fuzz/corpus/fuzz_dynamics/) from URDF documents.

A fuzz_dynamics input is a URDF document followed by 10 bytes that FuzzedDataProvider reads
from the end (fuzz/fuzz_dynamics.cpp): the scale of the states (1 byte), the seed of the
states (8 bytes), the options (1 byte: bit 0 free-flyer, bit 1 strict). The documents: the
loadable fuzz_urdf seeds, the example models, and models that load with defects the
algorithms must survive (massless moving links, point masses, extreme mass ratios, mimics
and loops that cannot close), and the inputs of fuzz/regressions/ (findings fixed since: each
must give a plucker::Error, never NaN). Run from the repository root; rewrites the directory.
"""
import os
import shutil
import struct

OUT = "fuzz/corpus/fuzz_dynamics"
REGRESSIONS = "fuzz/regressions"
I = '<inertial><mass value="{m}"/><inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial>'


def link(name, m=1.0, i=0.01, com=""):
    origin = f'<origin xyz="{com}"/>' if com else ""
    inner = I.format(m=m, i=i).replace("<inertial>", "<inertial>" + origin) if m is not None else ""
    return f'<link name="{name}">{inner}</link>'


def joint(name, kind, parent, child, extra=""):
    lim = '<limit lower="-1" upper="1" effort="10" velocity="2"/>' if kind in ("revolute", "prismatic") else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'{extra}{lim}</joint>')


def robot(name, body):
    return f'<robot name="{name}">{body}</robot>'


def suffix(scale, seed, flags):
    # FuzzedDataProvider::ConsumeIntegral reads its bytes from the end, the last one into the
    # most significant place: the seed is written least significant byte first.
    return bytes([scale]) + struct.pack("<Q", seed) + bytes([flags])


def main():
    docs = {}
    for name in ("valid_arm", "valid_continuous_strict", "valid_floating", "defects", "loop_four_bar",
                 "loop_all_types", "mimic", "loop_and_mimic", "defaults", "xml_constructs"):
        with open(os.path.join("fuzz/corpus/fuzz_urdf", name), "rb") as f:
            docs[name] = f.read()[1:]  # fuzz_urdf's first byte is its options
    for name in ("plucker_arm", "four_bar"):
        with open(f"examples/models/{name}.urdf", "rb") as f:
            docs["example_" + name] = f.read()
    chain = "".join(link(f"l{k}", m=10.0 ** (3 * (k % 5) - 6), i=10.0 ** (3 * (k % 5) - 8)) for k in range(12))
    chain += "".join(joint(f"j{k}", ("revolute", "prismatic", "continuous")[k % 3], f"l{k-1}", f"l{k}",
                           f'<origin xyz="0 0 {0.1 * k}" rpy="0.3 0 0"/><axis xyz="0 {k % 2} 1"/>')
                     for k in range(1, 12))
    docs["mass_ratios"] = robot("ratios", chain).encode()
    docs["massless_moving"] = robot("massless", link("base") + link("a", None) + link("b", None) + link("c") +
                                    joint("ja", "revolute", "base", "a") + joint("jb", "revolute", "a", "b") +
                                    joint("jc", "continuous", "base", "c")).encode()
    docs["point_masses"] = robot("points", link("base") + link("a", 1.0, 0.0, "0.5 0 0") +
                                 link("b", 2.0, 0.0) + joint("ja", "revolute", "base", "a") +
                                 joint("jb", "revolute", "a", "b", '<axis xyz="0 0 1"/>')).encode()
    docs["long_offsets"] = robot("long", link("base") + link("a", 1e9, 1e21, "1e6 0 0") + link("b", 1e-9, 1e-12) +
                                 joint("ja", "revolute", "base", "a", '<origin xyz="0 1e6 0"/>') +
                                 joint("jb", "prismatic", "a", "b", '<origin xyz="1e6 0 0"/>')).encode()
    docs["loop_cannot_close"] = robot("open", link("g") + link("a") + link("b") +
                                      joint("ja", "continuous", "g", "a", '<axis xyz="0 0 1"/>') +
                                      joint("jb", "continuous", "g", "b", '<origin xyz="10 0 0"/><axis xyz="0 0 1"/>') +
                                      '<loop_joint name="close" type="spherical"><predecessor link="a" xyz="0.1 0 0"/>'
                                      '<successor link="b" xyz="0.1 0 0"/></loop_joint>').encode()
    docs["mimic_conflict"] = robot("conflict", link("g") + link("a") + link("b") +
                                   joint("ja", "prismatic", "g", "a", '<axis xyz="1 0 0"/>') +
                                   joint("jb", "prismatic", "a", "b", '<axis xyz="1 0 0"/><mimic joint="ja" multiplier="1e6"/>') +
                                   '<loop_joint name="w" type="fixed"><predecessor link="g"/><successor link="b"/></loop_joint>').encode()

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for k, (name, doc) in enumerate(sorted(docs.items())):
        for flags in (0, 1):
            with open(os.path.join(OUT, f"{name}_{'free' if flags else 'fixed'}"), "wb") as f:
                f.write(doc + suffix(scale=k % 4, seed=1000 + k, flags=flags))
    regressions = sorted(f for f in os.listdir(REGRESSIONS) if f.startswith("dynamics-"))
    for name in regressions:
        shutil.copyfile(os.path.join(REGRESSIONS, name), os.path.join(OUT, "regression_" + name))
    print(f"{2 * len(docs) + len(regressions)} seeds in {OUT}")


if __name__ == "__main__":
    main()
