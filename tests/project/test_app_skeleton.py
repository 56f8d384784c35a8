"""The application a generated project starts with (src/main.c, microbuild/project/app_skeleton.py):
your sensor in, the dequantized top class out; for two models whose tensors connect, the
pipeline (the audio front end feeding the keyword spotter, 49 frames of 40 features). Built with
the project's own make and run on the host and in QEMU, compared with TFLM invoked the same way;
the requantizing feed compiled and checked against numpy."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.compiler import compile_model
from microbuild.project import generate_project
from microbuild.project.app_skeleton import _feed, _Model, app_main_c, connection

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared" / "models"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm_many  # noqa: E402
from project_support import DS_CNN, TINY_FC, app_line  # noqa: E402

FRONT_END = SHARED / "audio_preprocessor_int8.tflite"
SPOTTER = SHARED / "micro_speech_quantized.tflite"
FRAMES = 49

# What a user writes in read_sensor(): here a noise pattern whose loudness changes per frame.
AUDIO_C = """\
        const uint32_t h = (i + frame * 320u) * 2654435761u;
        input[i] = (int16_t)(((int32_t)((h >> 16) % 2001u) - 1000) * (int32_t)(frame % 5u + 1u));"""


def audio_frame(frame: int) -> np.ndarray:
    n = np.arange(480, dtype=np.uint64) + frame * 320
    h = (n * 2654435761) & 0xFFFFFFFF
    return (((h >> 16) % 2001).astype(np.int32) - 1000) * (frame % 5 + 1)


def shared_models():
    if not (FRONT_END.is_file() and SPOTTER.is_file()):
        pytest.skip(f"the real models folder {SHARED} is not here")
    return [FRONT_END, SPOTTER]


def test_the_front_end_connects_to_the_keyword_spotter():
    front, spotter = (compile_model(m, prefix=m.stem).summary() for m in shared_models())
    assert front["outputs"][0]["shape"] == [40] and spotter["inputs"][0]["shape"] == [1, 1960]
    # The front end's int8 features carry no quantization: they go in unchanged (TFLM's
    # micro_speech example does the same), 49 frames of 40.
    assert connection(front, spotter) == (FRAMES, "as-is")
    text = app_main_c("host", [front, spotter])
    assert "for (uint32_t frame = 0; frame < 49u; frame++)" in text
    assert "audio_preprocessor_int8_reset(audio_preprocessor_int8_state);" in text


def test_models_that_do_not_connect_run_side_by_side():
    a, b = (compile_model(m, prefix=m.stem).summary() for m in (DS_CNN, TINY_FC))
    frames, why = connection(a, b)
    assert frames is None and why == f"12 values do not fill {np.prod(b['inputs'][0]['shape'])} whole"
    text = app_main_c("host", [a, b])
    assert "does not connect" in text and "connect them yourself" in text
    assert "ds_cnn: top class" in text and "tiny_fc: top class" in text


def test_requantizing_feed_matches_numpy(tmp_path):
    """Model 1's int8 output (scale 0.5, zero point 3) into model 2's int8 input (scale 0.25,
    zero point -10): dequantize, round half away from zero, clamp."""
    first = {"prefix": "a", "inputs": [], "outputs": [
        {"shape": [6], "dtype": "int8", "scale": 0.5, "zero_point": 3}]}
    second = {"prefix": "b", "outputs": [], "inputs": [
        {"shape": [12], "dtype": "int8", "scale": 0.25, "zero_point": -10}]}
    assert connection(first, second) == (2, "requantize")
    values = np.array([-128, -60, 0, 3, 40, 127], dtype=np.int8)
    source = "\n".join([
        "#include <stdint.h>", "#include <stdio.h>",
        "#define A_OUTPUT0_SCALE 0.5f", "#define A_OUTPUT0_ZERO_POINT 3",
        "#define B_INPUT0_SCALE 0.25f", "#define B_INPUT0_ZERO_POINT -10",
        *_feed(_Model(first), _Model(second), "requantize"),
        "int main(void)", "{",
        f"    const int8_t from[6] = {{{', '.join(str(v) for v in values)}}};",
        "    int8_t to[6];", "    feed(from, to, 6);",
        '    for (int i = 0; i < 6; i++) printf("%d\\n", to[i]);', "    return 0;", "}", ""])
    (tmp_path / "feed.c").write_text(source)
    for cc in ("gcc", "clang"):
        subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "feed.c", "-o", "feed"],
                       cwd=tmp_path, check=True)
        got = [int(v) for v in subprocess.run([str(tmp_path / "feed")], capture_output=True,
                                              text=True, check=True).stdout.split()]
        real = 0.5 * (values.astype(np.float64) - 3)
        q = real / 0.25
        expected = np.clip(np.trunc(q + np.where(q < 0, -0.5, 0.5)) - 10, -128, 127)
        assert got == expected.astype(int).tolist()


@pytest.mark.parametrize("board", ["host", "mps2-an500"])
def test_the_pipeline_app_runs_like_tflm(board, tmp_path):
    """The generated make project for the two models, read_sensor() edited as a user would;
    built with -Werror (user.mk), run; the top class and score are TFLM's for the same 49
    frames through the front end (one interpreter: its noise estimate carries over) and the
    spotter. Then the self-test of the same project."""
    if board != "host" and shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed")
    models = shared_models()
    project = tmp_path / "kws"
    result = generate_project(board, models, "make", project)
    main = project / "src" / "main.c"
    text = main.read_text()
    assert text.count("        input[i] = 0;") == 1
    main.write_text(text.replace("        input[i] = 0;", AUDIO_C))
    (project / "user.mk").write_text("CFLAGS += -Werror\n")
    subprocess.run(["make", "-j2"], cwd=project, check=True, capture_output=True, timeout=600)
    proc = subprocess.run(["make", "run"], cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    features = run_tflm_many(models[0], [[audio_frame(f).astype(np.int16).reshape(1, 480)]
                                         for f in range(FRAMES)])
    spectrogram = np.concatenate([np.asarray(f[0]).reshape(-1) for f in features])
    spectrogram = spectrogram.astype(np.int8).reshape(1, 1960)
    assert len(np.unique(spectrogram)) > 10  # the features do follow the audio
    expected = app_line(models[1], "micro_speech_quantized", inputs=[spectrogram])
    (line,) = re.findall(r"micro_speech_quantized: top class .*", proc.stdout)
    assert line.startswith(expected + " ("), (line, expected)

    assert result.run == ["make run"]
    proc = subprocess.run(["make", "run", "SELF_TEST=1"], cwd=project, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and "mb-aot status micro_speech_quantized 0" in proc.stdout


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_the_skeleton_compiles_without_warnings(cc, tmp_path):
    """src/main.c for one model, two models side by side and the pipeline, with the models'
    headers, under -Wall -Wextra -Werror (C99) with gcc and clang."""
    sets = [[DS_CNN], [DS_CNN, TINY_FC]]
    if FRONT_END.is_file() and SPOTTER.is_file():
        sets.append([FRONT_END, SPOTTER])
    runtime_include = REPO / "runtime" / "include"
    for k, paths in enumerate(sets):
        folder = tmp_path / str(k)
        folder.mkdir()
        summaries = []
        for path in paths:
            compiled = compile_model(path, prefix=path.stem)
            compiled.write(folder)
            summaries.append(compiled.summary())
        (folder / "main.c").write_text(app_main_c("host", summaries))
        for self_test in ("0", "1"):
            subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "main.c",
                            f"-DMB_SELF_TEST={self_test}", f"-I{runtime_include}", "-I.",
                            "-o", "main.o"], cwd=folder, check=True, capture_output=True)
