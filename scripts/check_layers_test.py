#!/usr/bin/env python3
"""Tests of check_layers.py on small trees made here: each rule it keeps
fails on a planted bad include, naming the file, the line and the edge."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_layers.py"


class LayeringCheck(unittest.TestCase):
    def tree(self, files):
        """A tree with sdk/src, sdk/include and tools holding `files` {path: text}."""
        root = pathlib.Path(self.tmp.name)
        for folder in ("sdk/src/base", "sdk/include/jitscope", "tools/report"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        (root / "sdk/src/base/log.hpp").write_text("#pragma once\n")
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        return root

    def run_check(self, root):
        return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                              capture_output=True, text=True)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_tree_that_includes_downward_passes(self):
        r = self.run_check(self.tree({
            "sdk/src/ring/ring.hpp": '#include "base/log.hpp"\n',
            "sdk/src/flush/writer.cpp": '#include "ring/ring.hpp"\n#include "flush/writer.hpp"\n',
            "sdk/src/flush/writer.hpp": "#include <vector>\n",
            "tools/report/main.cpp": '#include "base/log.hpp"\n#include "render.hpp"\n',
        }))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("layering: ok", r.stdout)

    def test_an_upward_include_fails_naming_the_edge(self):
        r = self.run_check(self.tree({
            "sdk/src/ring/producer.cpp": '// a comment\n#include "format/trace_writer.hpp"\n',
            "sdk/src/format/trace_writer.hpp": "#pragma once\n",
        }))
        self.assertEqual(r.returncode, 1)
        self.assertIn('sdk/src/ring/producer.cpp:2: #include "format/trace_writer.hpp": '
                      "ring may not depend on format (allowed below ring: base, clock)", r.stderr)

    def test_an_angled_include_of_a_module_counts_too(self):
        r = self.run_check(self.tree({
            "sdk/src/ring/producer.cpp": "#include <vector>\n#include <cupti/cupti.hpp>\n",
            "sdk/src/cupti/cupti.hpp": "#pragma once\n",
            "sdk/include/jitscope/hot.hpp": "#include <ring/record.hpp>\n",
            "sdk/src/ring/record.hpp": "#pragma once\n",
        }))
        self.assertEqual(r.returncode, 1)
        self.assertIn('sdk/src/ring/producer.cpp:2: #include "cupti/cupti.hpp": ring may not depend '
                      "on cupti", r.stderr)
        self.assertIn("hot.hpp:1: #include \"ring/record.hpp\": a public header includes a private "
                      "one", r.stderr)

    def test_siblings_may_not_include_each_other(self):
        r = self.run_check(self.tree({
            "sdk/src/nvtx/capture.cpp": '#include "cupti/cupti.hpp"\n',
            "sdk/src/cupti/cupti.hpp": "#pragma once\n",
        }))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nvtx may not depend on cupti", r.stderr)

    def test_a_source_outside_any_module_fails(self):
        r = self.run_check(self.tree({"sdk/src/loose.cpp": "", "sdk/src/misc/x.cpp": ""}))
        self.assertEqual(r.returncode, 1)
        self.assertIn("sdk/src/loose.cpp: a source directly in sdk/src", r.stderr)
        self.assertIn("folder 'misc' is not a module", r.stderr)

    def test_a_private_header_by_bare_name_fails(self):
        r = self.run_check(self.tree({
            "sdk/src/ring/ring.hpp": "#pragma once\n",
            "sdk/src/ring/producer.cpp": '#include "ring.hpp"\n',
        }))
        self.assertEqual(r.returncode, 1)
        self.assertIn('producer.cpp:1: #include "ring.hpp": include a private header by its module '
                      "path", r.stderr)

    def test_public_headers_and_tools_keep_their_limits(self):
        r = self.run_check(self.tree({
            "sdk/include/jitscope/jitscope.hpp": '#include "ring/ring.hpp"\n',
            "sdk/src/ring/ring.hpp": "#pragma once\n",
            "tools/report/main.cpp": '#include "format/trace_writer.hpp"\n',
        }))
        self.assertEqual(r.returncode, 1)
        self.assertIn("a public header includes a private one", r.stderr)
        self.assertIn("the tools may use sdk/src's base only", r.stderr)

    def test_the_repository_itself_passes(self):
        r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
