"""UF2: the file a UF2 boot loader (the RP2040's boot ROM in BOOTSEL mode, many others) takes when
it is copied to the USB drive the loader shows.

Format (Microsoft's UF2 specification): 512-byte blocks, each carrying up to 476 bytes of payload
for one target address: magic 0x0A324655, 0x9E5D5157; flags; target address; payload size;
block number; number of blocks; family id (flag 0x00002000) or file size; the payload padded to
476 bytes; final magic 0x0AB16F30. Payloads here are 256 bytes at 256-byte aligned addresses
(what the RP2040's loader requires: one flash page per block).
"""

from __future__ import annotations

import struct
from pathlib import Path

from microbuild.errors import BoardError
from microbuild.firmware.image_steps import ImageStep

MAGIC_START0 = 0x0A324655
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
FLAG_FAMILY_ID = 0x00002000
BLOCK = 512
DATA_FIELD = 476
PAYLOAD = 256
RP2040_FAMILY_ID = 0xE48BFF56


def uf2_blocks(images: list[tuple[int, bytes]], family_id: int) -> bytes:
    """UF2 file holding ``images`` [(start address, bytes)], 256 bytes per block."""
    chunks = []
    for start, data in images:
        aligned = start - start % PAYLOAD
        data = bytes(start - aligned) + data
        for offset in range(0, len(data), PAYLOAD):
            piece = data[offset:offset + PAYLOAD]
            chunks.append((aligned + offset, piece + bytes(PAYLOAD - len(piece))))
    out = bytearray()
    for number, (address, piece) in enumerate(chunks):
        header = struct.pack("<8I", MAGIC_START0, MAGIC_START1, FLAG_FAMILY_ID, address,
                             PAYLOAD, number, len(chunks), family_id)
        out += header + piece + bytes(DATA_FIELD - PAYLOAD) + struct.pack("<I", MAGIC_END)
    return bytes(out)


class Uf2Image(ImageStep):
    name = "uf2"

    def check(self) -> None:
        if "family_id" not in self.settings:
            raise BoardError(f"{self.where()}: the uf2 step needs family_id, the UF2 family of "
                             f"the chip (RP2040: {RP2040_FAMILY_ID:#x}); a loader ignores blocks "
                             "of another family")

    def outputs(self, name: str) -> list[str]:
        return [f"{name}.uf2"]

    def run(self, elf: Path, outputs: list[Path]) -> str:
        from microbuild.firmware.images import region_images

        images = sorted(region_images(elf, self.board).values())
        blob = uf2_blocks(images, int(self.settings["family_id"]))
        outputs[0].write_bytes(blob)
        return (f"{outputs[0].name}: {len(blob) // BLOCK} blocks of {PAYLOAD} bytes, family "
                f"{int(self.settings['family_id']):#010x}")
