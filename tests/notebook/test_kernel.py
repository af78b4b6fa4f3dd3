"""tests/notebook/test_kernel.py — a real Jupyter client (jupyter_client) drives tsl-kernel:
execute, streams, results, errors, complete, inspect, is_complete, display, interrupt,
restart, history. Run by ctest with JUPYTER_PATH at the build tree's kernelspec."""
import time
import xml.etree.ElementTree as ET
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 30


class KernelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = start_new_kernel(kernel_name="tsl", startup_timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def run_cell(self, code):
        """The execute reply and the IOPub outputs (type, content) of one cell."""
        mid = self.kc.execute(code)
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        while reply["parent_header"].get("msg_id") != mid:
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        outs = []
        while True:
            m = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if m["parent_header"].get("msg_id") != mid:
                continue
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
            if m["msg_type"] not in ("status", "execute_input"):
                outs.append((m["msg_type"], m["content"]))
        return reply["content"], outs

    def test_execute_stream_and_result(self):
        reply, outs = self.run_cell('(println "hello") (+ 1 2)')
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(outs[0], ("stream", {"name": "stdout", "text": "hello\n"}))
        self.assertEqual(outs[1][0], "execute_result")
        self.assertEqual(outs[1][1]["data"]["text/plain"], "3")

    def test_stderr_stream(self):
        # What the engine writes to standard error is the cell's stderr stream, after the
        # stdout written before it; (exit) says there that it does not end the kernel.
        reply, outs = self.run_cell('(println "before") (exit 3)')
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(outs[0], ("stream", {"name": "stdout", "text": "before\n"}))
        self.assertEqual(outs[1][0], "stream")
        self.assertEqual(outs[1][1]["name"], "stderr")
        self.assertIn("(exit) does not end a notebook's kernel", outs[1][1]["text"])
        reply, outs = self.run_cell("(+ 2 2)")
        self.assertEqual(outs[-1][1]["data"]["text/plain"], "4")

    def test_definitions_persist(self):
        self.run_cell("(defn twice [x] (* x 2))")
        reply, outs = self.run_cell("(twice [1 2 3])")
        self.assertEqual(outs[-1][1]["data"]["text/plain"], "i64[3] [2 4 6]")

    def test_error(self):
        reply, outs = self.run_cell('(+ 1 "a")')
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "type error")
        self.assertIn("+ expects a number", reply["evalue"])
        (kind, content), = outs
        self.assertEqual(kind, "error")
        self.assertEqual(content["traceback"][1], '(+ 1 "a")')
        self.assertTrue(content["traceback"][2].startswith("^"))

    def test_complete(self):
        c = self.kc.complete("(ma", 3, reply=True, timeout=TIMEOUT)["content"]
        self.assertIn("map", c["matches"])
        self.assertEqual((c["cursor_start"], c["cursor_end"]), (1, 3))
        c = self.kc.complete("(sum x :ke", 10, reply=True, timeout=TIMEOUT)["content"]
        self.assertEqual(c["matches"], [":keepdims"])

    def test_inspect(self):
        c = self.kc.inspect("(sum x", 3, reply=True, timeout=TIMEOUT)["content"]
        self.assertTrue(c["found"])
        self.assertIn("(sum x :axis nil :keepdims false)", c["data"]["text/plain"])
        c = self.kc.inspect("(no-such-name", 5, reply=True, timeout=TIMEOUT)["content"]
        self.assertFalse(c["found"])

    def test_is_complete(self):
        for code, status in [("(+ 1", "incomplete"), ('(str "a', "incomplete"), ("(+ 1)", "complete"),
                             ("(+ 1))", "invalid"), ("(def a 1) ]", "invalid")]:
            mid = self.kc.is_complete(code)
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            self.assertEqual(reply["parent_header"]["msg_id"], mid)
            self.assertEqual(reply["content"]["status"], status, code)

    def test_history(self):
        self.run_cell("(def remembered 42)")
        mid = self.kc.history(hist_access_type="tail", n=50)
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], mid)
        self.assertIn("(def remembered 42)", [entry[2] for entry in reply["content"]["history"]])

    def test_kernel_info(self):
        info = self.kc.kernel_info(reply=True, timeout=TIMEOUT)["content"]["language_info"]
        self.assertEqual((info["name"], info["file_extension"], info["pygments_lexer"]), ("tsl", ".tsl", "clojure"))

    def test_interrupt_busy_and_idle(self):
        mid = self.kc.execute("(loop [i 0] (recur (inc i)))")
        time.sleep(0.5)
        self.km.interrupt_kernel()
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], mid)
        self.assertEqual(reply["content"]["evalue"], "interrupted")
        self.km.interrupt_kernel()  # idle: the kernel lives on
        time.sleep(0.2)
        reply, outs = self.run_cell("(+ 4 5)")
        self.assertEqual(outs[-1][1]["data"]["text/plain"], "9")

    def test_rich_values(self):
        reply, outs = self.run_cell("(reshape (arange 6) [2 3])")
        data = outs[-1][1]["data"]
        self.assertEqual(data["text/plain"], "i64[2,3] [[0 1 2] [3 4 5]]")
        self.assertIn("i64[2,3]", data["text/html"])
        self.assertEqual(data["text/html"].count("<tr>"), 2)
        self.assertEqual(data["text/html"].count("<td"), 6)
        reply, outs = self.run_cell("(zeros [100 100])")  # summarised: 3 + ... + 3 each way
        self.assertEqual(outs[-1][1]["data"]["text/html"].count("<tr>"), 7)
        reply, outs = self.run_cell("{:w (ones [2 2]) :b 1}")
        self.assertIn("tsl-map", outs[-1][1]["data"]["text/html"])
        reply, outs = self.run_cell("(layout-svg (ones [2 3]))")
        self.assertTrue(outs[-1][1]["data"]["image/svg+xml"].startswith("<svg"))
        reply, outs = self.run_cell("(defn sq [x] (* x x)) (graph sq [1.0 2.0])")
        svg = outs[-1][1]["data"]["image/svg+xml"]
        self.assertTrue(svg.startswith("<svg") and "mul" in svg, svg[:200])
        reply, outs = self.run_cell("(ir sq [1.0 2.0])")
        data = outs[-1][1]["data"]
        self.assertTrue(data["text/plain"].startswith('"func @sq'))
        self.assertIn('<span style="color:#8250df">@sq</span>', data["text/html"])
        self.assertIn('<span style="color:#0a7f5a">f32</span>[2]', data["text/html"])

    def test_tc_trace_timeline(self):
        # The last :tc call's trace is a picture: one rect per instruction, lanes the pipes
        # that ran (those tc-stats counts busy), the text a summary.
        reply, outs = self.run_cell("((jit (fn [a b] (matmul a b)) :target :tc) (ones [32 32]) (ones [32 32])) "
                                    "(tc-trace)")
        data = outs[-1][1]["data"]
        self.assertTrue(data["text/plain"].startswith("#<trace :tc "), data["text/plain"])
        svg = data["image/svg+xml"]
        self.assertTrue(svg.startswith("<svg"), svg[:100])
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        boxes = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
        reply, outs = self.run_cell("[(count (:start (tc-trace))) (:instructions (tc-stats))]")
        count, instructions = outs[-1][1]["data"]["text/plain"].strip("[]").split()
        self.assertEqual(len(boxes), int(count))
        self.assertEqual(int(count), int(instructions))
        lanes = [t.text for t in root.iter(ns + "text") if t.get("class") == "lane"]
        reply, outs = self.run_cell("(vec (map (fn [[k v]] (name k)) (filter (fn [[k v]] (> v 0)) (:busy (tc-stats)))))")
        busy = outs[-1][1]["data"]["text/plain"]
        self.assertEqual(sorted(l.lower() for l in lanes), sorted(busy.strip("[]").replace('"', "").split()))
        self.assertIn("data:image/svg+xml;base64,", data["text/html"])

    def test_display(self):
        reply, outs = self.run_cell('(println "before") (display (ones [2])) (println "after")')
        self.assertEqual([kind for kind, _ in outs], ["stream", "display_data", "stream"])
        self.assertEqual(outs[1][1]["data"]["text/plain"], "f32[2] [1 1]")
        self.assertIn("text/html", outs[1][1]["data"])

    def test_load_relative(self):
        import os, tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "lib.tsl"), "w") as f:
                f.write("(def from-lib 41)")
            reply, outs = self.run_cell('(load "%s/lib.tsl") (inc from-lib)' % d)
            self.assertEqual(outs[-1][1]["data"]["text/plain"], "42")

    def test_kernel_install(self):
        import json, os, subprocess, tempfile
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([os.environ["TSL"], "kernel", "install", "--prefix", d], check=True, capture_output=True)
            with open(os.path.join(d, "share/jupyter/kernels/tsl/kernel.json")) as f:
                spec = json.load(f)
            self.assertTrue(os.access(spec["argv"][0], os.X_OK))
            self.assertEqual(spec["argv"][1:], ["-f", "{connection_file}"])
            self.assertEqual((spec["language"], spec["interrupt_mode"]), ("tsl", "signal"))

    def test_zz_restart(self):
        self.run_cell("(def before-restart 1)")
        self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=60)
        reply, outs = self.run_cell("before-restart")
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "name error")


if __name__ == "__main__":
    unittest.main()
