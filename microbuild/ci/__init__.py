"""The CI room: build a matrix of (board, toolchain, model, executor) cells, tabulate their sizes,
compare with a baseline, and hand the matrix to a distributed CI engine as a workflow file."""
