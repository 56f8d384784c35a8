"""Stand-in for the official ststm32 platform's builder with no framework (tests only): the same
tools, flags and libraries as platform-ststm32's builder/main.py and frameworks/_bare.py, and a
default linker script that does not exist (the project must bring its own, as with ststm32)."""
from SCons.Script import Default, DefaultEnvironment

env = DefaultEnvironment()
board = env.BoardConfig()
cpu = board.get("build.cpu")
env.Replace(AR="arm-none-eabi-gcc-ar", AS="arm-none-eabi-as", CC="arm-none-eabi-gcc",
            CXX="arm-none-eabi-g++", GDB="arm-none-eabi-gdb", OBJCOPY="arm-none-eabi-objcopy",
            RANLIB="arm-none-eabi-gcc-ranlib", SIZETOOL="arm-none-eabi-size", ARFLAGS=["rc"],
            PROGSUFFIX=".elf", LDSCRIPT_PATH="STM32F746NGHX_FLASH.ld")
env.Append(ASFLAGS=["-x", "assembler-with-cpp", "-mcpu=%s" % cpu],
           CCFLAGS=["-Os", "-ffunction-sections", "-fdata-sections", "-Wall", "-mthumb",
                    "-nostdlib", "-mcpu=%s" % cpu],
           LINKFLAGS=["-Os", "-Wl,--gc-sections,--relax", "-mthumb", "--specs=nano.specs",
                      "--specs=nosys.specs", "-mcpu=%s" % cpu],
           # ststm32 also links stdc++, whose nano variant Debian's toolchain does not ship.
           LIBS=["c", "gcc", "m", "nosys"])
program = env.BuildProgram()
binary = env.Command("$BUILD_DIR/${PROGNAME}.bin", program,
                     "$OBJCOPY -O binary $SOURCE $TARGET")
Default([program, binary])
