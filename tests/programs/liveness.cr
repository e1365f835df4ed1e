# liveness.cr -- ground truth for the liveness tests (inferred frees).
#
# Usage: liveness [ROUNDS [more]]     (ROUNDS defaults to 12)
#
# Every round allocates a batch at three sites, each @[NoInline]:
#   churn_a  400 instances of Churn (one pointer field: GC_malloc)
#   churn_b  300 Bytes.new(96)        (GC_malloc_atomic of 96 bytes)
#   leak_c    20 instances of Leaked  (Int64 fields only: GC_malloc_atomic),
#             appended to a global array and never dropped
#   temp_d    50 instances of Temp (GC_malloc_atomic), each dropped as soon
#             as made: short-lived, dead at the first collection after it
# With "more", churn_b allocates 340 per round instead of 300 (+13.3%): the
# deliberately added allocations of the diff test.
# then drops the previous round's churn_a and churn_b batches (the arrays
# holding them are cleared) and calls GC.collect, so every dropped object
# is unreachable at the first collection after its drop, and every object
# of the current batch is still referenced at it. The program ends with
# the last batch dropped and two more GC.collect calls.
#
# Output (stdout), one line per object, written without allocating:
#   DROP <site> <addr> <gc_no at allocation> <gc_no at drop>
#   KEEP <site> <addr> <gc_no at allocation>      (leak_c, at the end)
# where gc_no is the collector's GC_gc_no (LibGC.gc_no). An object dropped
# at gc_no D must be reported freed at collection D + 1 (conservative stack
# scanning may keep a few alive longer), and never at or before D.
# Last line: ROUNDS=<n> COLLECTIONS=<GC_gc_no at exit>. Exit status: 0.

class Churn
  @next : Churn? = nil
  @v : Int64

  def initialize(@v)
  end
end

class Leaked
  @a : Int64
  @b : Int64 = 0_i64
  @c : Int64 = 0_i64

  def initialize(@a)
  end
end

PER_A = 400
PER_B = ARGV[1]? == "more" ? 340 : 300
PER_C =  20
PER_D =  50

class Temp
  @a : Int64
  @b : Int64 = 0_i64

  def initialize(@a)
  end

  def a
    @a
  end
end

@[NoInline]
def churn_a(i : Int32) : Churn
  Churn.new(i.to_i64)
end

@[NoInline]
def churn_b : Bytes
  Bytes.new(96)
end

@[NoInline]
def leak_c(i : Int32) : Leaked
  Leaked.new(i.to_i64)
end

@[NoInline]
def temp_d(i : Int32) : Temp
  Temp.new(i.to_i64)
end

rounds = (ARGV[0]? || "12").to_i
out = STDOUT
out.sync = false
held_a = Array(Churn).new(PER_A)
held_b = Array(Bytes).new(PER_B)
born_a = Array(UInt64).new(PER_A)
born_b = Array(UInt64).new(PER_B)
prev_a = Array(Churn).new(PER_A)
prev_b = Array(Bytes).new(PER_B)
prev_born_a = Array(UInt64).new(PER_A)
prev_born_b = Array(UInt64).new(PER_B)
leaks = Array(Leaked).new(PER_C * (rounds + 1))
leak_born = Array(UInt64).new(PER_C * (rounds + 1))

rounds.times do |r|
  PER_A.times do |i|
    held_a << churn_a(i)
    born_a << LibGC.gc_no.to_u64
  end
  PER_B.times do
    held_b << churn_b
    born_b << LibGC.gc_no.to_u64
  end
  PER_C.times do |i|
    leaks << leak_c(i)
    leak_born << LibGC.gc_no.to_u64
  end
  # Temporaries: used once, dropped at once (no reference kept).
  PER_D.times do |i|
    t = temp_d(i)
    g = LibGC.gc_no.to_u64
    out << "DROP temp_d " << t.object_id << ' ' << g << ' ' << g << '\n' if t.a >= 0
  end
  # Drop the previous batch: log it, then clear the only references.
  d = LibGC.gc_no.to_u64
  prev_a.each_with_index do |o, i|
    out << "DROP churn_a " << o.object_id << ' ' << prev_born_a[i] << ' ' << d << '\n'
  end
  prev_b.each_with_index do |o, i|
    out << "DROP churn_b " << o.to_unsafe.address << ' ' << prev_born_b[i] << ' ' << d << '\n'
  end
  prev_a.clear
  prev_b.clear
  # This batch becomes the previous one (swap the arrays, no copy).
  prev_a, held_a = held_a, prev_a
  prev_b, held_b = held_b, prev_b
  prev_born_a, born_a = born_a, prev_born_a
  prev_born_b, born_b = born_b, prev_born_b
  born_a.clear
  born_b.clear
  GC.collect
end

d = LibGC.gc_no.to_u64
prev_a.each_with_index do |o, i|
  out << "DROP churn_a " << o.object_id << ' ' << prev_born_a[i] << ' ' << d << '\n'
end
prev_b.each_with_index do |o, i|
  out << "DROP churn_b " << o.to_unsafe.address << ' ' << prev_born_b[i] << ' ' << d << '\n'
end
prev_a.clear
prev_b.clear
GC.collect
GC.collect
leaks.each_with_index do |o, i|
  out << "KEEP leak_c " << o.object_id << ' ' << leak_born[i] << '\n'
end
out << "ROUNDS=" << rounds << " COLLECTIONS=" << LibGC.gc_no << '\n'
out.flush
