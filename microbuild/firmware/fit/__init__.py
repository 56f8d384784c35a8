"""Does the linked firmware fit the board? Read the ELF, attribute every byte to a memory region.

Every allocated section counts in the region where it runs (its VMA). A section that is copied at
boot (``.data``: run address in RAM, load address in flash) counts a second time, as a load image,
in the region holding its load address. A section that extends past the end of its region, or lies
outside every region, is an overflow.

``ld --noinhibit-exec`` still writes an ELF after a region overflow, with the sections that did not
fit at addresses past the region's end; :func:`analyze_elf` reads such an ELF and attributes those
sections to the region the linker script put them in, so :func:`fit_error` can say what is using
the region and by how much it overflows.

For the host (no memory map) only the section totals are reported.

The package, by job: ``report`` (the report's data, rows and JSON), ``elf`` (reading the ELF),
``analyze`` (sections to regions), ``advice`` (the message of a firmware that does not fit).
"""

from microbuild.firmware.fit.advice import fit_error
from microbuild.firmware.fit.analyze import analyze_elf, widened_weights
from microbuild.firmware.fit.elf import load_address, region_images, section_totals
from microbuild.firmware.fit.report import (CATEGORIES, TABLE_HEADER, Contribution, DeviceUsage,
                                           FitReport, Overflow, RegionUsage, SectionInfo, Symbol,
                                           WidenedWeights, split_lines)

__all__ = ["CATEGORIES", "TABLE_HEADER", "Contribution", "DeviceUsage", "FitReport", "Overflow",
           "RegionUsage", "SectionInfo", "Symbol", "WidenedWeights", "analyze_elf", "fit_error",
           "load_address", "region_images", "section_totals", "split_lines", "widened_weights"]
