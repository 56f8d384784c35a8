"""A workspace split across memory regions (microbuild/compiler/workspace_split.py): one that fits
the first region is compiled exactly as without regions; one that does not is split, each part a
sound plan within its region's budget, the graph's inputs and outputs in the first part, the
generated C addressing every other part through the model's own array."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from microbuild.compiler import compile_model
from microbuild.compiler.plan_check import verify_plan
from microbuild.compiler.workspace_split import WorkspaceRegion, buffer_heat
from microbuild.errors import FitError

MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.mark.parametrize("model", ["resnet8", "ds_cnn", "mobilenet_v1_025_vww"])
def test_a_workspace_that_fits_the_first_region_is_compiled_as_without_regions(model):
    plain = compile_model(MODELS / f"{model}.tflite", prefix="m")
    regions = [WorkspaceRegion("dtcm", plain.workspace_bytes), WorkspaceRegion("axi", 1 << 20)]
    listed = compile_model(MODELS / f"{model}.tflite", prefix="m", workspace_regions=regions)
    assert listed.sources == plain.sources
    assert listed.summary() == plain.summary()
    # One byte less and it no longer fits: split.
    regions[0] = WorkspaceRegion("dtcm", plain.workspace_bytes - 16)
    split = compile_model(MODELS / f"{model}.tflite", prefix="m", workspace_regions=regions)
    assert split.plan.regions and split.sources != plain.sources


def test_resnet8_split_in_two_regions_is_a_sound_plan_within_each_budget():
    plain = compile_model(MODELS / "resnet8.tflite", prefix="r8")
    budget = plain.workspace_bytes // 2
    compiled = compile_model(MODELS / "resnet8.tflite", prefix="r8", workspace_regions=[
        WorkspaceRegion("dtcm", budget), WorkspaceRegion("axi_sram", 1 << 20)])
    plan = compiled.plan
    (first, first_bytes), (second, second_bytes) = plan.regions
    assert (first, second) == ("dtcm", "axi_sram")
    assert 0 < first_bytes <= budget and second_bytes > 0
    assert compiled.workspace_bytes == first_bytes  # what the caller passes as `workspace`
    assert verify_plan(compiled.graph, plan, compiled.lowerings) == []
    # Inputs and outputs in the first part, whatever their heat.
    for t in compiled.graph.inputs + compiled.graph.outputs:
        assert plan.locations[t].region == 0
    # Every other part is addressed through the model's own array, declared in the header.
    c, h = compiled.sources["r8.c"], compiled.sources["r8.h"]
    assert f"uint8_t r8_workspace_axi_sram[{second_bytes}]" in c
    assert 'section(MB_WORKSPACE_PART_SECTION("axi_sram") "r8")' in c
    assert f"#define R8_WORKSPACE_AXI_SRAM_SIZE {second_bytes}" in h
    assert f"#define R8_WORKSPACE_SIZE {first_bytes}" in h
    for b in plan.buffers:
        base = "ws" if b.region == 0 else "r8_workspace_axi_sram"
        for t in b.tensors:
            if t in compiled.graph.inputs or t in compiled.graph.outputs:
                continue
            # Every tensor the code names is at its part's base + its offset.
            used = re.findall(rf"\*\)\((\w+) \+ {b.offset}\)", c)
            assert base in used, (b.label, base)
    parts = compiled.summary()["workspace_parts"]
    assert [(p["region"], p["bytes"]) for p in parts] == plan.regions
    assert sum(len(p["buffers"]) for p in parts) == len(plan.buffers)


def test_the_hottest_buffers_go_first():
    """Every buffer that went to the second region is no hotter than the coldest one that the
    first region took over it: the first region is filled hottest first, a colder buffer only
    where a hotter one did not fit (so it is also smaller than that hotter one)."""
    plain = compile_model(MODELS / "ds_cnn.tflite", prefix="k")
    compiled = compile_model(MODELS / "ds_cnn.tflite", prefix="k", workspace_regions=[
        WorkspaceRegion("fast", plain.workspace_bytes * 2 // 3),
        WorkspaceRegion("slow", 1 << 20)])
    plan = compiled.plan
    heat = buffer_heat(plan, compiled.graph)
    io = set(compiled.graph.inputs) | set(compiled.graph.outputs)
    free = [i for i, b in enumerate(plan.buffers) if not io & set(b.tensors)]
    fast = [i for i in free if plan.buffers[i].region == 0]
    slow = [i for i in free if plan.buffers[i].region == 1]
    assert fast and slow
    hottest = max(free, key=lambda i: heat[i])
    assert plan.buffers[hottest].region == 0
    for i in fast:
        hotter_in_slow = [j for j in slow if heat[j] > heat[i]]
        # A colder buffer took a place in the first region only because it is smaller than the
        # hotter ones left out.
        assert all(plan.buffers[j].size > plan.buffers[i].size for j in hotter_in_slow)


def test_regions_too_small_together_name_each_region_and_the_bytes_over():
    # A workspace that must be split is the op-by-op plan's (row buffers stay in one part).
    plain = compile_model(MODELS / "resnet8.tflite", prefix="r8", row_stream=False)
    with pytest.raises(FitError) as info:
        compile_model(MODELS / "resnet8.tflite", prefix="r8", workspace_regions=[
            WorkspaceRegion("dtcm", plain.workspace_bytes // 2, counted="test budget"),
            WorkspaceRegion("axi_sram", 4096)])
    message = str(info.value)
    assert message.startswith(f"model 'r8': its workspace ({plain.workspace_bytes:,} bytes")
    assert "(memory.placement.workspace: dtcm, axi_sram)" in message
    dtcm = next(line for line in message.splitlines() if line.startswith("  dtcm: "))
    axi = next(line for line in message.splitlines() if line.startswith("  axi_sram: "))
    assert f"{plain.workspace_bytes // 2:,} bytes" in dtcm and "(test budget)" in dtcm
    assert axi.startswith("  axi_sram: 4,096 bytes (4.0 KiB) free; its part ")
    over = int(re.search(r"OVER by ([\d,]+) bytes", axi).group(1).replace(",", ""))
    part = int(re.search(r"its part ([\d,]+) bytes", axi).group(1).replace(",", ""))
    assert over == part - 4096 > 0
    assert re.search(r"Over by [\d,]+ bytes .* in all\.", message)


def test_a_region_that_gets_no_buffer_gets_no_array():
    """Three regions, the second large enough for everything the first leaves: the third gets
    nothing, and the plan (and code) names only the two used."""
    plain = compile_model(MODELS / "resnet8.tflite", prefix="r8")
    compiled = compile_model(MODELS / "resnet8.tflite", prefix="r8", workspace_regions=[
        WorkspaceRegion("dtcm", plain.workspace_bytes // 2), WorkspaceRegion("axi", 1 << 20),
        WorkspaceRegion("sram4", 1 << 20)])
    assert [name for name, _ in compiled.plan.regions] == ["dtcm", "axi"]
    assert "sram4" not in compiled.sources["r8.c"] and "sram4" not in compiled.sources["r8.h"]
    assert verify_plan(compiled.graph, compiled.plan, compiled.lowerings) == []


def test_row_streaming_is_kept_when_it_fits_the_first_region_else_the_split_is_op_by_op():
    streamed = compile_model(MODELS / "resnet8.tflite", prefix="r8")
    op_by_op = compile_model(MODELS / "resnet8.tflite", prefix="r8", row_stream=False)
    assert streamed.plan.row_region is not None
    assert streamed.workspace_bytes < op_by_op.workspace_bytes
    # The streamed workspace fits the first region: streamed, nothing split.
    fits = compile_model(MODELS / "resnet8.tflite", prefix="r8", workspace_regions=[
        WorkspaceRegion("dtcm", streamed.workspace_bytes), WorkspaceRegion("axi_sram", 1 << 20)])
    assert fits.plan.row_region is not None and not fits.plan.regions
    assert fits.workspace_bytes == streamed.workspace_bytes
    # It does not: the op-by-op plan is split (row buffers live in one workspace).
    split = compile_model(MODELS / "resnet8.tflite", prefix="r8", workspace_regions=[
        WorkspaceRegion("dtcm", streamed.workspace_bytes - 1024),
        WorkspaceRegion("axi_sram", 1 << 20)])
    assert split.plan.row_region is None and [r for r, _ in split.plan.regions] == \
        ["dtcm", "axi_sram"]
    assert sum(size for _, size in split.plan.regions) >= op_by_op.workspace_bytes - 1024
