# sample_sites.cr -- known allocation sites for the sampling tests.
#
# Usage: sample_sites MODE MIBS
#   MODE proportions: site_a allocates ~70% of the bytes, site_b ~30%, in
#        sizes drawn from 1000..7000 bytes (a fixed-seed PCG32), interleaved
#        as 7 calls of site_a then 3 of site_b.
#   MODE alternate: site_a and site_b alternate strictly, every call 4096
#        bytes: a periodic pattern a fixed sampling interval would alias with.
#   MODE classes: every call in site_a, the sizes cycling through
#        1366..1586 bytes: requests the collector serves from its 2048-byte
#        size class (two per block), far more than 1/4 above the request.
#   MODE small: as proportions, in sizes drawn from 8..360 bytes: small
#        objects, served from the threads' free lists (--sample refill
#        sees only their refills).
#   MODE alternate_small: site_a and site_b alternate strictly, every call
#        32 bytes (one 48-byte size class): a refill samples the first
#        object of each batch, and batches of a fixed size alias with it.
#   MODE frees: 100 times, a 1 MiB block from big_block, freed with
#        GC.free, then 1000 blocks of 16 bytes from small_block, each freed
#        with GC.free (explicit GC_free calls; MIBS is ignored).
#   MIBS: total MiB allocated (about).
#
# What it allocates: every call is Bytes.new(n), one GC_malloc_atomic of
# exactly n bytes, made in site_a or site_b (each @[NoInline]); the buffers
# are dropped at once. The runtime allocates a little at start-up and for
# printing; none of it has site_a or site_b on its stack.
#
# Output (stdout): SITE_A_BYTES=<exact>, SITE_B_BYTES=<exact>,
# SITE_A_CALLS=<n>, SITE_B_CALLS=<n>; for frees: BIG_FREES=100,
# SMALL_FREES=100000. Exit status: 0.

@[NoInline]
def site_a(n : Int32) : UInt8
  b = Bytes.new(n)
  b[0]
end

@[NoInline]
def site_b(n : Int32) : UInt8
  b = Bytes.new(n)
  b[0]
end

@[NoInline]
def big_block : Pointer(UInt8)
  Pointer(UInt8).malloc(1 << 20)
end

@[NoInline]
def small_block : Pointer(UInt8)
  Pointer(UInt8).malloc(16)
end

mode = ARGV[0]? || "proportions"
if mode == "frees"
  100.times do
    GC.free(big_block.as(Void*))
    1000.times { GC.free(small_block.as(Void*)) }
  end
  puts "BIG_FREES=100"
  puts "SMALL_FREES=100000"
  exit 0
end

total = (ARGV[1]? || "64").to_i64 * 1024 * 1024
rng = Random::PCG32.new(42_u64)
a_bytes = b_bytes = 0_i64
a_calls = b_calls = 0_i64
sink = 0_u64
while a_bytes + b_bytes < total
  if mode == "classes"
    n = 1366 + (a_calls % 221).to_i32
    sink &+= site_a(n)
    a_bytes += n; a_calls += 1
  elsif mode == "alternate_small"
    sink &+= site_a(32)
    sink &+= site_b(32)
    a_bytes += 32; b_bytes += 32
    a_calls += 1; b_calls += 1
  elsif mode == "alternate"
    sink &+= site_a(4096)
    sink &+= site_b(4096)
    a_bytes += 4096; b_bytes += 4096
    a_calls += 1; b_calls += 1
  else
    sizes = mode == "small" ? 8..360 : 1000..7000
    7.times do
      n = rng.rand(sizes)
      sink &+= site_a(n)
      a_bytes += n; a_calls += 1
    end
    3.times do
      n = rng.rand(sizes)
      sink &+= site_b(n)
      b_bytes += n; b_calls += 1
    end
  end
end
puts "SITE_A_BYTES=#{a_bytes}"
puts "SITE_B_BYTES=#{b_bytes}"
puts "SITE_A_CALLS=#{a_calls}"
puts "SITE_B_CALLS=#{b_calls}"
puts "SINK=#{sink}"
