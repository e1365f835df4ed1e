# gdb -batch -x gdb_frames.py: at the first GC_malloc_atomic call of SIZE
# bytes ($ALYS_GDB_SIZE), print one line per frame, innermost first: the ELF
# symbol that holds the frame's pc (pc - 1 for return addresses, like the
# tracer), as `info symbol` names it.
import os
import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
# Ours go on to _start: so must gdb's.
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
gdb.execute("set breakpoint pending on")
gdb.execute("break GC_malloc_atomic if $rdi == %d" % int(os.environ["ALYS_GDB_SIZE"]))
gdb.execute("run")
frame = gdb.newest_frame()
first = True
while frame is not None:
    if frame.type() == gdb.NORMAL_FRAME:
        pc = frame.pc() if first else frame.pc() - 1
        sym = gdb.execute("info symbol 0x%x" % pc, to_string=True).strip()
        # "NAME + OFF in section .text of /path" or "NAME in section .text"
        name = sym.split(" in section")[0].rsplit(" + ", 1)[0]
        print("FRAME " + name)
    first = False
    frame = frame.older()
gdb.execute("kill")
