"""tests/notebook/test_notebooks.py OUTDIR — nbclient executes examples/notebooks/*.ipynb on
tsl-kernel and checks their outputs' MIME types and contents; nbconvert turns the executed
tour into HTML, which headless Chromium screenshots (OUTDIR/tour.png: its size and
non-blank pixels are checked)."""
import os
import subprocess
import sys
import unittest

import nbformat
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = os.path.join(ROOT, "examples", "notebooks")
OUT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "notebook-out")


def execute(name):
    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="tsl", allow_errors=True,
                   resources={"metadata": {"path": NOTEBOOKS}}).execute()
    os.makedirs(OUT, exist_ok=True)
    nbformat.write(nb, os.path.join(OUT, name))
    return [c for c in nb.cells if c.cell_type == "code"]


def result(cell):
    (out,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    return out.data


class Notebooks(unittest.TestCase):
    def test_tour(self):
        cells = execute("tour.ipynb")
        self.assertEqual(cells[0].outputs[0].text, "hello from TSL\n")
        self.assertEqual(result(cells[0])["text/plain"], "3")
        self.assertEqual(result(cells[1])["text/plain"], "2880067194370816120")
        table = result(cells[2])
        self.assertIn("i64[3,4]", table["text/html"])
        self.assertEqual(table["text/html"].count("<tr>"), 3)
        self.assertIn("…", result(cells[3])["text/html"])  # 50×50 summarised
        self.assertIn("tsl-map", result(cells[4])["text/html"])
        self.assertEqual(result(cells[5])["text/plain"], "f32[3] [2 4 6]")
        graph = result(cells[6])
        self.assertTrue(graph["image/svg+xml"].startswith("<svg"))
        self.assertIn("data:image/svg+xml;base64,", graph["text/html"])
        shown = [o for o in cells[7].outputs if o.output_type == "display_data"]
        self.assertEqual(len(shown), 2)
        self.assertIn("f32[3,3]", shown[1].data["text/html"])
        (error,) = cells[8].outputs
        self.assertEqual((error.output_type, error.ename), ("error", "type error"))
        self.assertIn('<pre class="tsl-ir"', result(cells[9])["text/html"])

        html = os.path.join(OUT, "tour.html")
        subprocess.run(["jupyter-nbconvert", "--to", "html", "--output", html, os.path.join(OUT, "tour.ipynb")],
                       check=True, capture_output=True, timeout=120)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn("2880067194370816120", page)
        self.assertIn("data:image/svg+xml;base64,", page)
        shot = os.path.join(OUT, "tour.png")
        if os.path.exists(shot):
            os.remove(shot)
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1000,1400", "--screenshot=" + shot, "file://" + html],
                       capture_output=True, timeout=120)
        from PIL import Image
        image = Image.open(shot).convert("L")
        self.assertEqual(image.size, (1000, 1400))
        dark = sum(1 for p in image.getdata() if p < 128)
        self.assertGreater(dark, 5000)  # text and tables, not a blank page

    def test_digits(self):
        cells = execute("digits.ipynb")
        self.assertEqual(result(cells[0])["text/plain"], "[1797 65]")
        self.assertEqual(result(cells[1])["text/html"].count("<tr>"), 8)  # an 8×8 image
        epochs = [o.data["text/plain"] for o in cells[3].outputs if o.output_type == "display_data"]
        self.assertEqual(len(epochs), 10)
        losses = [float(text.split(":loss ")[1].rstrip("}")) for text in epochs]
        self.assertLess(losses[-1], losses[0] / 5)
        self.assertGreaterEqual(float(result(cells[3])["text/plain"]), 0.9)  # held-out accuracy
        self.assertIn("i64[20]", result(cells[4])["text/html"])

    def test_tensor_core(self):
        cells = execute("tensor-core.ipynb")
        for cell in cells[:2]:
            self.assertTrue(result(cell)["image/svg+xml"].startswith("<svg"))
        self.assertIn("f32[64,64]", result(cells[2])["text/plain"])
        self.assertIn(":macs 262144", result(cells[3])["text/plain"])
        trace = result(cells[4])  # the last :tc call's instructions on a timeline
        self.assertTrue(trace["text/plain"].startswith("#<trace :tc 4 lanes "), trace["text/plain"])
        self.assertTrue(trace["image/svg+xml"].startswith("<svg") and "<title>mmad " in trace["image/svg+xml"])


if __name__ == "__main__":
    unittest.main()
