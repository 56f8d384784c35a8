"""The device room: how a built firmware reaches a board (flash runners, emulators, the host
process) and what it says back."""
