"""The build room: linking firmware for a board and checking that it fits."""
