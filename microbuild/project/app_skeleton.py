"""The ``src/main.c`` a generated project starts with: a real application, not a test harness.

It fills the model's input from the user's sensor (``read_sensor``, the one marked function to
edit), runs the model, dequantizes the scores with the scale and zero point of the generated
header and prints the top class. With two models whose tensors connect (an audio front end
feeding a keyword spotter: 40 features per frame, 49 frames per spectrogram), it shows the
pipeline: model 1 runs once per frame and its output fills the next slice of model 2's input,
requantized when the two quantizations differ.

microbuild's self-test (runtime/aot/self_test.c: each model on an input embedded at build time,
printing the ``mb-aot`` lines microbuild compares with TFLM) replaces ``main`` when the project
is built with ``MB_SELF_TEST=1`` (each format's README says how).
"""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

_C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t",
            "float32": "float", "bool": "uint8_t"}
_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
           "int32": (-2147483648, 2147483647)}


def comment(*paragraphs: str, indent: str = "", width: int = 96) -> list[str]:
    """A C block comment of ``paragraphs`` (each wrapped; a paragraph starting with spaces is
    kept as it is, for formulas), ``indent`` before each line."""
    body: list[str] = []
    for i, text in enumerate(paragraphs):
        if i:
            body.append("")
        if text.startswith(" "):
            body.append(text)
        else:
            body += textwrap.wrap(text, width - len(indent) - 3, break_on_hyphens=False)
    lines = [f"{indent}/* {body[0]}"] + [f"{indent} * {line}".rstrip() for line in body[1:]]
    lines[-1] += " */"
    return lines


def _size(spec: dict[str, Any]) -> int:
    n = 1
    for d in spec["shape"]:
        n *= int(d)
    return n


def _quantized(spec: dict[str, Any]) -> bool:
    return spec["dtype"] != "float32" and float(spec.get("scale") or 0.0) != 0.0


class _Model:
    def __init__(self, summary: dict[str, Any]):
        self.summary = summary
        self.p = summary["prefix"]
        self.P = self.p.upper()
        self.inputs = summary["inputs"]
        self.outputs = summary["outputs"]
        self.stateful = bool(summary.get("state_bytes"))

    def ctype(self, kind: str, k: int) -> str:
        specs = self.inputs if kind == "input" else self.outputs
        return _C_TYPES.get(specs[k]["dtype"], "uint8_t")

    def memory(self) -> list[str]:
        lines = comment(f"{self.p}'s working memory: its inputs, outputs and every "
                        "intermediate tensor, in section .bss.mb_workspace so that the fit "
                        "report counts it as the model's workspace.")
        lines += [f"static uint8_t {self.p}_workspace[{self.P}_WORKSPACE_SIZE]",
                 f"    __attribute__((aligned({self.P}_WORKSPACE_ALIGN), "
                 f"section(\".bss.mb_workspace.app_{self.p}\")));"]
        if self.stateful:
            lines += comment(f"{self.p}'s state, kept from one run to the next (recurrent "
                             f"cells, noise estimates); {self.p}_reset() clears it.")
            lines += [f"static uint8_t {self.p}_state[{self.P}_STATE_SIZE]",
                      f"    __attribute__((aligned({self.P}_STATE_ALIGN), "
                      f"section(\".bss.mb_state.app_{self.p}\")));"]
        return lines

    def run_call(self) -> str:
        ws = f"{self.p}_workspace"
        args = [f"{self.p}_input{k}({ws})" for k in range(len(self.inputs))]
        args += [f"{self.p}_output{k}({ws})" for k in range(len(self.outputs))]
        args.append(ws)
        if self.stateful:
            args.append(f"{self.p}_state")
        return f"{self.p}_run({', '.join(args)})"


def _read_sensor(model: _Model, frames: int | None) -> list[str]:
    spec = model.inputs[0]
    ctype = model.ctype("input", 0)
    P = model.P
    if spec["dtype"] == "float32":
        how = ["Write real values: this input is float."]
        fill = "0.0f"
        default = "0.0"
    elif _quantized(spec):
        how = ["Quantize real values with the input's scale and zero point:",
               f"    q = round(real / {P}_INPUT0_SCALE) + {P}_INPUT0_ZERO_POINT"]
        fill = f"({ctype}){P}_INPUT0_ZERO_POINT"
        default = "0.0 (the zero point)"
    else:
        how = ["This input has no quantization parameters: write the values themselves (for "
               "an audio front end, 16-bit PCM samples)."]
        fill = "0"
        default = "0"
    frame = ("a frame of " if frames else "")
    shape = ", ".join(str(d) for d in spec["shape"])
    text = [f"===== EDIT ME: your sensor. Fill {model.p}'s input 0 with {frame}"
            f"{P}_INPUT0_SIZE values of {P}_INPUT0_TYPE (shape {{{shape}}})."] + how
    if frames:
        text.append(f"`frame` counts from 0 to {frames - 1}: the pipeline below asks for "
                    f"{frames} frames in a row (a streaming application would keep the last "
                    f"{frames - 1} and add one each time).")
    text.append(f"Until you do, it writes the real value {default} everywhere. Return 0, or "
                "non-zero when there is no data (the application then stops).")
    lines = comment(*text)
    lines += [
        f"static int read_sensor({ctype} *input, uint32_t count"
        + (", uint32_t frame)" if frames else ")"),
        "{",
    ]
    if frames:
        lines.append("    (void)frame;")
    lines += [
        "    for (uint32_t i = 0; i < count; i++) {",
        f"        input[i] = {fill};",
        "    }",
        "    return 0;",
        "}",
    ]
    return lines


def _extra_inputs(model: _Model) -> list[str]:
    """Inputs after the first: filled with their real zero so the model runs; the comment says
    where they come from."""
    lines = []
    for k in range(1, len(model.inputs)):
        spec = model.inputs[k]
        value = (f"({model.ctype('input', k)}){model.P}_INPUT{k}_ZERO_POINT"
                 if spec["dtype"] != "float32" else "0.0f")
        lines += [
            f"    /* Input {k}: fill it too (here: the real value 0). */",
            f"    for (uint32_t i = 0; i < {model.P}_INPUT{k}_SIZE; i++) {{",
            f"        {model.p}_input{k}({model.p}_workspace)[i] = {value};",
            "    }",
        ]
    return lines


def _score_function(model: _Model) -> list[str]:
    spec = model.outputs[0]
    ctype = model.ctype("output", 0)
    P = model.P
    if spec["dtype"] == "float32":
        body, note = "return output[i];", "It is float already."
    elif _quantized(spec):
        body = (f"return {P}_OUTPUT0_SCALE * (float)((int32_t)output[i] - "
                f"{P}_OUTPUT0_ZERO_POINT);")
        note = ("Dequantized with the scale and zero point of the model header: "
                f"real = {P}_OUTPUT0_SCALE * (q - {P}_OUTPUT0_ZERO_POINT).")
    else:
        body, note = "return (float)output[i];", "It has no quantization parameters."
    return [*comment(f"The score of class i in {model.p}'s output 0. {note}"),
            f"static float {model.p}_score(const {ctype} *output, uint32_t i)",
            "{",
            f"    {body}",
            "}"]


def _report(model: _Model, ticks: str) -> list[str]:
    P, p = model.P, model.p
    return [
        f"    /* The top class of {p}'s output 0 (map the index to your labels). */",
        f"    const {model.ctype('output', 0)} *{p}_scores = {p}_output0({p}_workspace);",
        f"    uint32_t {p}_best = 0;",
        f"    for (uint32_t i = 1; i < {P}_OUTPUT0_SIZE; i++) {{",
        f"        if ({p}_score({p}_scores, i) > {p}_score({p}_scores, {p}_best)) {{",
        f"            {p}_best = i;",
        "        }",
        "    }",
        f'    mb_print("{p}: top class ");',
        f"    mb_print_u64({p}_best);",
        '    mb_print(" score ");',
        f"    print_decimal3({p}_score({p}_scores, {p}_best));",
        '    mb_print(" (");',
        f"    mb_print_u64({ticks});",
        '    mb_print(" timer ticks)\\n");',
    ]


def _run_and_check(model: _Model, indent: str = "    ") -> list[str]:
    return [f"{indent}status = {model.run_call()};",
            f"{indent}if (status != 0) {{",
            f'{indent}    mb_print("{model.p}_run failed: ");',
            f"{indent}    mb_print_i32(status);",
            f'{indent}    mb_print("\\n");',
            f"{indent}    return 1;",
            f"{indent}}}"]


def connection(first: dict[str, Any], second: dict[str, Any]) -> tuple[int | None, str]:
    """How model 1's output 0 feeds model 2's input 0: (frames, how) where frames is how many
    runs of model 1 fill the input (None: they do not connect) and how is 'copy', 'as-is'
    (model 1's output carries no quantization: its values go in unchanged, as TFLM's
    micro_speech example feeds its front end's features) or 'requantize'."""
    out, inp = first["outputs"][0], second["inputs"][0]
    n_out, n_in = _size(out), _size(inp)
    if n_out == 0 or n_in % n_out:
        return None, f"{n_out} values do not fill {n_in} whole"
    frames = n_in // n_out
    same = (out["dtype"] == inp["dtype"] and float(out.get("scale") or 0) ==
            float(inp.get("scale") or 0) and out.get("zero_point", 0) == inp.get("zero_point", 0))
    if same:
        return frames, "copy"
    if out["dtype"] == inp["dtype"] and not _quantized(out) and out["dtype"] != "float32":
        return frames, "as-is"
    return frames, "requantize"


def _feed(first: _Model, second: _Model, how: str) -> list[str]:
    out, inp = first.outputs[0], second.inputs[0]
    src, dst = first.ctype("output", 0), second.ctype("input", 0)
    P1, P2 = first.P, second.P
    why = {"copy": "same type, scale and zero point: a copy",
           "as-is": (f"{first.p}'s output carries no quantization parameters, so its values go "
                     f"in unchanged, as TFLM's micro_speech example feeds its audio front end's "
                     f"features to the model"),
           "requantize": "the quantizations differ: dequantize, then quantize again"}[how]
    lines = [*comment(f"{first.p}'s output -> a slice of {second.p}'s input ({why})."),
             f"static void feed(const {src} *from, {dst} *to, uint32_t count)", "{",
             "    for (uint32_t i = 0; i < count; i++) {"]
    if how in ("copy", "as-is"):
        lines.append("        to[i] = from[i];")
    else:
        real = ("(float)from[i]" if out["dtype"] == "float32" or not _quantized(out) else
                f"{P1}_OUTPUT0_SCALE * (float)((int32_t)from[i] - {P1}_OUTPUT0_ZERO_POINT)")
        if inp["dtype"] == "float32":
            lines.append(f"        to[i] = {real};")
        else:
            lo, hi = _RANGES.get(inp["dtype"], (-2147483648, 2147483647))
            scale = f"{P2}_INPUT0_SCALE" if _quantized(inp) else "1.0f"
            lines += [f"        const float real = {real};",
                      f"        float q = real / {scale};",
                      "        q = q < 0.0f ? q - 0.5f : q + 0.5f; /* round to nearest */",
                      f"        int32_t v = (int32_t)q + {P2}_INPUT0_ZERO_POINT;",
                      f"        v = v < {lo} ? {lo} : v > {hi} ? {hi} : v;",
                      f"        to[i] = ({dst})v;"]
    lines += ["    }", "}"]
    return lines


# main.c's helper printing a float with three decimals (mb_print has no %f).
_PRINT_DECIMAL3 = [
    "/* mb_print has no %f: value with three decimals. */",
    "static void print_decimal3(float value)",
    "{",
    "    int32_t milli = (int32_t)(value * 1000.0f + (value < 0.0f ? -0.5f : 0.5f));",
    "    if (milli < 0) {",
    '        mb_print("-");',
    "        milli = -milli;",
    "    }",
    "    mb_print_i32(milli / 1000);",
    '    mb_print(".");',
    "    mb_print_i32((milli / 100) % 10);",
    "    mb_print_i32((milli / 10) % 10);",
    "    mb_print_i32(milli % 10);",
    "}",
    "",
]


def _intro(board: str, models: list[_Model], frames, how: str) -> list[str]:
    """The paragraphs of main.c's opening comment: what the file does for these models."""
    names = ", ".join(m.p for m in models)
    intro = [f"Your application: board {board} running {names}. `microbuild generate` wrote "
             "this file once and never overwrites it: it is yours to change."]
    if frames is not None:
        m1, m2 = models
        intro.append(
            f"It fills the input from your sensor (read_sensor() below: the function to edit "
            f"first) and runs the pipeline: {m1.p} runs once per frame, and its output 0 "
            f"({_size(m1.outputs[0])} values) fills the next slice of {m2.p}'s input 0, "
            f"{frames} frames in all. Then {m2.p} runs, and its scores, dequantized with the "
            f"scale and zero point of its header, give the top class.")
    else:
        intro.append("It fills the input from your sensor (read_sensor() below: the function "
                     "to edit first), runs the model, dequantizes the scores with the scale and "
                     "zero point of the model header and prints the top class.")
        if len(models) == 2:
            intro.append(f"{models[0].p}'s output 0 does not connect to {models[1].p}'s input "
                         f"0 ({how}), so the two run side by side, each on its own input: "
                         f"connect them yourself.")
        elif len(models) > 2:
            intro.append("Each model runs on its own input, one after the other.")
    intro.append("microbuild's self-test replaces this main when the project is built with "
                 "MB_SELF_TEST=1 (see README.md): each model on an input embedded at build "
                 "time, printing the `mb-aot` lines microbuild compares with TFLM bit for bit.")
    return intro


def app_main_c(board: str, summaries: Sequence[dict[str, Any]]) -> str:
    """src/main.c for ``summaries`` (the compiler's summary of each model, firmware order)."""
    models = [_Model(s) for s in summaries]
    frames, how = (connection(summaries[0], summaries[1]) if len(models) == 2 else (None, ""))
    pipeline = frames is not None
    intro = _intro(board, models, frames, how)
    head = [
        *comment(*intro),
        "#include <stdint.h>",
        "",
        '#include "microbuild/platform.h"',
        *[f'#include "{m.p}.h"' for m in models],
        "",
        "#if MB_SELF_TEST",
        '#include "microbuild/aot.h"',
        "",
        "int main(void)",
        "{",
        "    return mb_aot_self_test(); /* runtime/aot/self_test.c */",
        "}",
        "#else",
        "",
    ]
    body: list[str] = []
    for m in models:
        body += m.memory() + [""]
    if pipeline:
        body += _read_sensor(models[0], frames) + [""]
        body += _feed(models[0], models[1], how) + [""]
    else:
        body += _read_sensor(models[0], None) + [""]
    scored = [models[1]] if pipeline else models
    for m in scored:
        body += _score_function(m) + [""]
    body += _PRINT_DECIMAL3 + [
        "int main(void)",
        "{",
        "    mb_console_init();",
        "    mb_timer_init();",
        "    int status;",
    ]
    for m in models:
        if m.stateful:
            body.append(f"    {m.p}_reset({m.p}_state);")
    if pipeline:
        m1, m2 = models
        body += [
            "",
            "    const uint64_t start = mb_timer_now();",
            f"    for (uint32_t frame = 0; frame < {frames}u; frame++) {{",
            f"        if (read_sensor({m1.p}_input0({m1.p}_workspace), {m1.P}_INPUT0_SIZE, "
            f"frame) != 0) {{",
            '            mb_print("no sensor data\\n");',
            "            return 1;",
            "        }",
            *["    " + line for line in _extra_inputs(m1)],
            *_run_and_check(m1, "        "),
            f"        feed({m1.p}_output0({m1.p}_workspace),",
            f"             {m2.p}_input0({m2.p}_workspace) + frame * {m1.P}_OUTPUT0_SIZE, "
            f"{m1.P}_OUTPUT0_SIZE);",
            "    }",
            *_extra_inputs(m2),
            *_run_and_check(m2),
            "    const uint64_t ticks = mb_timer_now() - start;",
            "",
            *_report(m2, "ticks"),
        ]
    else:
        first = True
        for m in models:
            body += [""]
            if first:
                body += [f"    if (read_sensor({m.p}_input0({m.p}_workspace), "
                         f"{m.P}_INPUT0_SIZE) != 0) {{",
                         '        mb_print("no sensor data\\n");',
                         "        return 1;",
                         "    }"]
                body += _extra_inputs(m)
            else:
                body += [f"    /* {m.p}'s inputs: fill them from your data (here: the real "
                         f"value 0). */"]
                body += _zero_inputs(m)
            body += [f"    const uint64_t {m.p}_start = mb_timer_now();"]
            body += _run_and_check(m)
            body += [f"    const uint64_t {m.p}_ticks = mb_timer_now() - {m.p}_start;", ""]
            body += _report(m, f"{m.p}_ticks")
            first = False
    body += ["    return 0;", "}", "#endif /* MB_SELF_TEST */", ""]
    return "\n".join(head + body)


def _zero_inputs(model: _Model) -> list[str]:
    lines = []
    for k, spec in enumerate(model.inputs):
        value = (f"({model.ctype('input', k)}){model.P}_INPUT{k}_ZERO_POINT"
                 if spec["dtype"] != "float32" else "0.0f")
        lines += [f"    for (uint32_t i = 0; i < {model.P}_INPUT{k}_SIZE; i++) {{",
                  f"        {model.p}_input{k}({model.p}_workspace)[i] = {value};",
                  "    }"]
    return lines
