#!/usr/bin/env python3
"""The Android worker's settings agree with the C API's.

worker/mt_worker_config_fields.h lists every mt_worker_config field (the
compiler holds it to the struct) with the org.mt.worker.WorkerConfig field
the JNI bridge reads into it. This checks WorkerConfig.java against that
table: the same public fields with the same types, none the bridge would
never read, and for each a Builder field and method, a line in the
constructor and one in toBuilder. Each problem is named with the file to
change.

  config_fields_agree.py SOURCE_DIR              check the tree
  config_fields_agree.py SOURCE_DIR --self-test  check that mismatches are caught
"""
import re
import sys
from pathlib import Path

TABLE = "worker/mt_worker_config_fields.h"
JAVA = "deploy/android/app/src/main/java/org/mt/worker/WorkerConfig.java"
JAVA_TYPES = {"String": "String", "Int": "int", "Boolean": "boolean", "Long": "long", "Double": "double"}


def table_fields(text):
    """{java name: (java type, C member)} from the MT_CONFIG_FIELD lines."""
    fields = {}
    for c_member, java, kind in re.findall(r'MT_CONFIG_FIELD\(\s*(\w+),\s*"(\w+)",\s*(\w+)\s*\)', text):
        fields[java] = (JAVA_TYPES.get(kind, "?" + kind), c_member)
    return fields


def block(text, header):
    """The text between the braces that follow `header` (regex)."""
    m = re.search(header + r"[^{]*\{", text)
    if not m:
        return ""
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def check(table_text, java_text):
    """The list of disagreements, empty when all agree."""
    table = table_fields(table_text)
    errors = []
    if not table:
        return [f"{TABLE}: no MT_CONFIG_FIELD lines found"]
    builder = block(java_text, r"public\s+static\s+final\s+class\s+Builder")
    outer = java_text.replace(builder, "")
    public = dict((n, t) for t, n in re.findall(r"^\s*public\s+final\s+(\w+)\s+(\w+)\s*;", outer, re.M))
    builder_fields = dict((n, t) for t, n in re.findall(r"^\s*private\s+(\w+)\s+(\w+)\s*(?:=[^;]*)?;", builder, re.M))
    builder_methods = dict((n, t) for n, t in re.findall(r"public\s+Builder\s+(\w+)\(\s*(\w+)\s+\w+\s*\)", builder))
    constructor = block(outer, r"private\s+WorkerConfig\(\s*Builder\s+b\s*\)")
    assigned = set(n for n, m in re.findall(r"\b(\w+)\s*=\s*b\.(\w+)\s*;", constructor) if n == m)
    to_builder = block(outer, r"public\s+Builder\s+toBuilder\(\s*\)")
    copied = set(n for n, m in re.findall(r"\bb\.(\w+)\s*=\s*(\w+)\s*;", to_builder) if n == m)
    copied |= set(re.findall(r"new\s+Builder\(\s*(\w+)\s*\)", to_builder))

    for name, (java_type, c_member) in table.items():
        if name not in public:
            errors.append(f"{JAVA}: no public final field '{name}' ({java_type}), which {TABLE} "
                          f"reads into mt_worker_config.{c_member}")
        elif public[name] != java_type:
            errors.append(f"{JAVA}: field '{name}' is {public[name]}, but {TABLE} reads it as "
                          f"{java_type} into mt_worker_config.{c_member}")
    for name, java_type in public.items():
        if name not in table:
            errors.append(f"{JAVA}: public field '{name}' has no MT_CONFIG_FIELD line in {TABLE}, "
                          "so the JNI bridge never reads it (add the C field too)")
            continue
        where = f"{JAVA}: field '{name}'"
        if builder_fields.get(name) != java_type:
            errors.append(f"{where} has no Builder field '{name}' of type {java_type}")
        if builder_methods.get(name) != java_type:
            errors.append(f"{where} has no Builder method {name}({java_type} v)")
        if name not in assigned:
            errors.append(f"{where} is not set in the constructor ({name} = b.{name};)")
        if name not in copied:
            errors.append(f"{where} is not copied in toBuilder (b.{name} = {name};)")
    return errors


def self_test(table_text, java_text):
    """Each mismatch below must be caught, naming its field."""
    first_line = re.search(r'.*MT_CONFIG_FIELD\(\s*hub,.*\n', table_text).group(0)
    mutations = [
        ("a table line removed", "hub", table_text.replace(first_line, ""), java_text),
        ("a Java field added", "extraOption",
         table_text, java_text.replace("public final String hub;", "public final String hub;\n  public final int extraOption;")),
        ("a Java field retyped", "threads",
         table_text, java_text.replace("public final int threads;", "public final long threads;")),
        ("a Java field removed", "insecure",
         table_text, java_text.replace("public final boolean insecure;", "")),
        ("a Builder method removed", "tlsKeyPath",
         table_text, re.sub(r"public Builder tlsKeyPath\(String v\)[^}]*\}", "", java_text)),
        ("a constructor line removed", "stateDir",
         table_text, java_text.replace("stateDir = b.stateDir;", "")),
        ("a toBuilder line removed", "reportPath",
         table_text, java_text.replace("b.reportPath = reportPath;", "")),
    ]
    failed = 0
    for what, field, table_variant, java_variant in mutations:
        if table_variant == table_text and java_variant == java_text:
            print(f"self-test: '{what}' changed nothing: the mutation no longer applies")
            failed += 1
            continue
        errors = check(table_variant, java_variant)
        if not any(f"'{field}'" in e for e in errors):
            print(f"self-test: {what} ('{field}') was not caught: {errors}")
            failed += 1
        else:
            print(f"self-test: {what} caught: {errors[0]}")
    return failed


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--self-test"):
        print(__doc__)
        return 2
    root = Path(sys.argv[1])
    table_text = (root / TABLE).read_text()
    java_text = (root / JAVA).read_text()
    if len(sys.argv) == 3:
        if check(table_text, java_text):
            print("self-test: the tree itself disagrees; run without --self-test")
            return 1
        return 1 if self_test(table_text, java_text) else 0
    errors = check(table_text, java_text)
    for e in errors:
        print(e)
    if not errors:
        print(f"{len(table_fields(table_text))} fields agree between {TABLE} and {JAVA}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
