# memory_parts.cr -- a process whose memory is known (issue 40).
#
#   memory_parts FIBERS STACK_KIB LIVE_MIB FILE
#     starts FIBERS fibers that each write STACK_KIB KiB of their stack
#     (64 KiB frames, one after the other) and then block on a channel;
#     keeps LIVE_MIB MiB alive in buffers of 2047 bytes (2048 with the
#     collector's extra byte: one of its size classes, two to a block, so
#     the live bytes it marks are what was asked); collects once (the
#     marks that say what is live); prints "READY fibers=<n>
#     stack_kib=<k> live_bytes=<b>" and waits until FILE exists.
FRAME = 64 * 1024

@[NoInline]
def touch(p : UInt8*, n : Int32) : Int32
  sum = 0
  i = 0
  while i < n
    p[i] = (i & 0xff).to_u8
    sum &+= p[i]
    i += 512
  end
  sum
end

# One 64 KiB frame per level: each frame's pages are written once.
@[NoInline]
def use_stack(levels : Int32, blocked : Channel(Nil), ready : Channel(Int32)) : Int32
  buf = uninitialized StaticArray(UInt8, 65536)
  sum = touch(buf.to_unsafe, FRAME)
  if levels > 1
    # the frame read again after the call: no tail call (--release) may
    # reuse it for the next level
    buf[1] = use_stack(levels - 1, blocked, ready).to_u8!
  else
    ready.send(sum)
    blocked.receive
  end
  sum &+ touch(buf.to_unsafe, 2)
end

fibers = ARGV[0].to_i
levels = ARGV[1].to_i // 64
live_mib = ARGV[2].to_i
file = ARGV[3]

blocked = Channel(Nil).new
ready = Channel(Int32).new
fibers.times { spawn { use_stack(levels, blocked, ready) } }
fibers.times { ready.receive }

keep = Array(Bytes).new(live_mib * 512)
(live_mib * 512).times { |i| keep << Bytes.new(2047, (i & 0xff).to_u8) }
GC.collect
puts "READY fibers=#{fibers} stack_kib=#{levels * 64} live_bytes=#{keep.size * 2048}"
STDOUT.flush
until File.exists?(file)
  sleep 0.01
end
puts "kept=#{keep.size}"
fibers.times { blocked.send(nil) }
