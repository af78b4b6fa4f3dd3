"""tests/notebook/test_kernel_standard.py — Jupyter's standard kernel checks
(jupyter_kernel_test) against tsl-kernel."""
import unittest

import jupyter_kernel_test


class TslKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "tsl"
    language_name = "tsl"
    file_extension = ".tsl"
    code_hello_world = '(println "hello, world")'
    completion_samples = [{"text": "(reshap", "matches": {"reshape"}}]
    complete_code_samples = ["(+ 1 2)", "[1 2]", "(defn f [x] x)"]
    incomplete_code_samples = ["(+ 1", "(defn f [x]", '(str "abc']
    code_generate_error = "(undefined-name-here 1)"
    code_execute_result = [{"code": "(+ 1 2)", "result": "3"}, {"code": "[1.5 2.5]", "result": "f32[2] [1.5 2.5]"}]
    code_display_data = [{"code": '(display "shown")', "mime": "text/plain"}]
    code_inspect_sample = "reshape"


if __name__ == "__main__":
    unittest.main()
