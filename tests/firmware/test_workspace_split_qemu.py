"""A board whose first workspace region is too small for the model: the build splits the
workspace across the regions the board lists, the ELF has a workspace array in each, the fit
report shows the split, and the firmware runs in QEMU bit-exact with TFLM. Regions too small
together stop the build with an error naming each; the RPC executor refuses a split board."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from microbuild import api
from microbuild.boards import load_board
from microbuild.errors import FitError, MicrobuildError
from microbuild.firmware.fit import split_lines

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"

# mps2-an500 with its data SSRAM shrunk to 36 KiB (16 KiB of it the stack, so ResNet-8 does not
# fit even row-streamed and its op-by-op workspace is split): QEMU's AN500 also
# has 16 MiB of PSRAM at 0x60000000, which the board lists second for the workspace.
SPLIT_BOARD = """
    name: {name}
    extends: mps2-an500
    memory:
      regions:
        sram: {{origin: 0x20000000, length: {sram}, access: rwx, description: "SSRAM2/3, shrunk"}}
        psram: {{origin: 0x60000000, length: {psram}, access: rwx, description: "PSRAM"}}
      placement:
        workspace: [sram, psram]
        model_slots: []  # mps2-an500's two 1 MiB slots would not fit the smaller PSRAMs below
    """


def split_board(folder: Path, name: str = "split-an500", psram: str = "16M",
                sram: str = "36K") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(SPLIT_BOARD.format(name=name, psram=psram, sram=sram))
                    .lstrip("\n"))
    return path


def symbols(elf: Path) -> dict[str, tuple[int, int]]:
    with open(elf, "rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        return {s.name: (s["st_value"], s["st_size"]) for s in table.iter_symbols() if s.name}


@pytest.mark.parametrize("model", ["resnet8", "mobilenet_v1_025_vww"])
def test_split_workspace_runs_bit_exact_with_its_parts_in_both_regions(model, tmp_path):
    # VWW's input and output (27 KiB) stay in the first region: it gets 48 KiB of sram.
    board_file = split_board(tmp_path, sram="36K" if model == "resnet8" else "48K")
    board = load_board(str(board_file))
    sram, psram = board.regions["sram"], board.regions["psram"]
    build = api.build_firmware(str(board_file), [MODELS / f"{model}.tflite"], tmp_path / "out",
                               name=model, seed=3)
    assert build.size["fits"], build.size
    summary = build.models[0]
    prefix = summary["prefix"]
    parts = summary["workspace_parts"]
    assert [p["region"] for p in parts] == ["sram", "psram"]

    # The ELF: the first part (the AOT harness's workspace) in sram, the second in psram, each
    # of the planned size.
    found = symbols(build.elf)
    first_at, first_size = found[f"mb_aot_workspace_{prefix}"]
    second_at, second_size = found[f"{prefix}_workspace_psram"]
    assert sram.origin <= first_at and first_at + first_size <= sram.end
    assert psram.origin <= second_at and second_at + second_size <= psram.end
    assert first_size == parts[0]["bytes"] and second_size == parts[1]["bytes"]

    # The fit report: bytes per region, and which buffers are where.
    regions = {r["name"]: r for r in build.size["regions"]}
    in_psram = [c for c in regions["psram"]["contributions"] if c["category"] == "workspace"]
    assert [(c["section"], c["bytes"]) for c in in_psram] == [(".mb_workspace_psram",
                                                                second_size)]
    (line,) = split_lines(build.size["workspaces"])
    assert line.startswith(f"{prefix} workspace split, hottest buffers first: sram ")
    assert f"psram {second_size / 1024:.1f} KiB ({len(parts[1]['buffers'])} buffer" in line
    assert parts[1]["buffers"][0] in line
    assert any(row[0] == "psram" and "workspace" in row[4] for row in build.size_rows)

    result = api.run_firmware(build, timeout=120)
    expected = run_tflm(MODELS / f"{model}.tflite", build.inputs(prefix))
    for got, want in zip(result.outputs[prefix], expected, strict=True):
        np.testing.assert_array_equal(got, want, err_msg=model)


def test_a_model_that_fits_the_first_region_builds_as_on_the_plain_board(tmp_path):
    """ds_cnn's workspace fits the shrunk sram: the same model C, the workspace at the same
    address as on mps2-an500 (whose sram starts at the same address), nothing in psram."""
    board_file = split_board(tmp_path)
    model = MODELS / "ds_cnn.tflite"
    split = api.build_firmware(str(board_file), [model], tmp_path / "split", name="kws")
    plain = api.build_firmware("mps2-an500", [model], tmp_path / "plain", name="kws")
    for name in ("ds_cnn.c", "ds_cnn.h", "ds_cnn_weights.c"):
        assert ((tmp_path / "split" / "kws.src" / "ds_cnn" / name).read_text()
                == (tmp_path / "plain" / "kws.src" / "ds_cnn" / name).read_text()), name
    assert "workspace_parts" not in split.models[0]
    ours, theirs = symbols(split.elf), symbols(plain.elf)
    assert ours["mb_aot_workspace_ds_cnn"] == theirs["mb_aot_workspace_ds_cnn"]
    assert not [n for n in ours if n.startswith("ds_cnn_workspace_")]
    assert split_lines(split.size["workspaces"]) == []


def test_regions_too_small_together_stop_the_build_naming_each(tmp_path):
    board_file = split_board(tmp_path, "tiny-psram", psram="8K")
    with pytest.raises(FitError) as info:
        api.build_firmware(str(board_file), [MODELS / "resnet8.tflite"], tmp_path / "out")
    message = str(info.value)
    assert "(memory.placement.workspace: sram, psram), even split across them:" in message
    assert "  sram: 19,456 bytes (19.0 KiB) free (36K minus 16K stack, 1K kept for .data/.bss)" \
        in message
    assert "  psram: 8,192 bytes (8.0 KiB) free (8K); its part " in message
    assert "OVER by" in message.split("  psram: ")[1]


def test_the_rpc_executor_refuses_a_split_workspace_but_not_a_split_board(tmp_path):
    board_file = split_board(tmp_path)
    with pytest.raises(MicrobuildError) as info:
        api.build_firmware(str(board_file), [MODELS / "resnet8.tflite"], tmp_path / "out",
                           executor="rpc")
    message = str(info.value)
    assert message.startswith("model 'resnet8': its workspace is split across sram, psram "
                              "(board split-an500 lists several regions")
    assert "Build with the aot or app executor" in message
    # A model whose workspace fits the first region is served as on any board.
    build = api.build_firmware(str(board_file), [MODELS / "ds_cnn.tflite"], tmp_path / "rpc",
                               executor="rpc")
    assert build.size["fits"] and "workspace_parts" not in build.models[0]


def test_nucleo_h743zi_splits_between_dtcm_and_axi_sram(tmp_path):
    """The built-in NUCLEO-H743ZI lists DTCM then AXI SRAM; with its DTCM shrunk to 28 KiB (8 KiB
    of it stack) resnet8 no longer fits it, even row-streamed, and is split: built and checked up to the flashing
    boundary (no board is attached here), the parts in the two regions."""
    path = tmp_path / "h743-small-dtcm.yaml"
    path.write_text(textwrap.dedent("""
        name: h743-small-dtcm
        extends: nucleo-h743zi
        memory:
          regions:
            dtcm: {origin: 0x20000000, length: 28K, access: rwx, description: "DTCM, shrunk"}
        """).lstrip("\n"))
    board = load_board(str(path))
    assert board.workspace_regions == ["dtcm", "axi_sram"]
    build = api.build_firmware(str(path), [MODELS / "resnet8.tflite"], tmp_path / "out")
    assert build.size["fits"], build.size
    found = symbols(build.elf)
    dtcm, axi = board.regions["dtcm"], board.regions["axi_sram"]
    assert dtcm.origin <= found["mb_aot_workspace_resnet8"][0] < dtcm.end
    assert axi.origin <= found["resnet8_workspace_axi_sram"][0] < axi.end
    parts = build.models[0]["workspace_parts"]
    assert [p["region"] for p in parts] == ["dtcm", "axi_sram"]
    assert parts[0]["bytes"] <= 28 * 1024 - 8 * 1024 - 1024


def test_two_split_models_share_their_first_part_and_run_bit_exact(tmp_path):
    """Several models in one AOT firmware share one workspace: with a split board, the first
    parts (both within the first region's budget) share one array in sram; each model's second
    part is its own array in psram."""
    # 48 KiB of sram for VWW's input and output; op by op, so ResNet-8 is split there too.
    board_file = split_board(tmp_path, sram="48K")
    board = load_board(str(board_file))
    models = [MODELS / "resnet8.tflite", MODELS / "mobilenet_v1_025_vww.tflite"]
    build = api.build_firmware(str(board_file), models, tmp_path / "out", seed=5,
                               row_stream=False)
    assert build.size["fits"], build.size
    found = symbols(build.elf)
    sram, psram = board.regions["sram"], board.regions["psram"]
    shared_at, shared_size = found["mb_aot_shared_workspace"]
    assert sram.origin <= shared_at and shared_at + shared_size <= sram.end
    assert shared_size == max(m["workspace_parts"][0]["bytes"] for m in build.models)
    for m in build.models:
        assert psram.origin <= found[f"{m['prefix']}_workspace_psram"][0] < psram.end
    assert len(split_lines(build.size["workspaces"])) == 2
    result = api.run_firmware(build, timeout=180)
    for model, m in zip(models, build.models):
        expected = run_tflm(model, build.inputs(m["prefix"]))
        for got, want in zip(result.outputs[m["prefix"]], expected, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=model.name)


def test_globals_larger_than_the_reserve_left_by_the_split_are_named(tmp_path):
    """The split leaves DATA_RESERVE bytes of the first region for .data/.bss (known only after
    the link); an application whose globals need more gets the fit error with what to do."""
    source = tmp_path / "globals.c"
    source.write_text(textwrap.dedent("""
        #include <stdint.h>
        /* 20 KiB of globals, kept by a constructor that touches them. */
        uint8_t big_table[20480];
        __attribute__((constructor)) static void touch(void) { big_table[0] = 1u; }
        """))
    with pytest.raises(FitError) as info:
        api.build_firmware(str(split_board(tmp_path)), [MODELS / "resnet8.tflite"],
                           tmp_path / "out", sources=[source])
    message = " ".join(str(info.value).split())
    assert "region sram overflows by" in message
    assert ("To fix it: the workspace split left 1,024 bytes (1.0 KiB) of sram for .data and "
            ".bss, and they need more: move them to another region (memory.placement.data and "
            ".bss) or make them smaller") in message
    assert "list a second region after sram" not in message
