# Census test: holds known numbers of objects of three classes, drops as
# many again as garbage, collects, says what it holds, then keeps running
# (allocating a little, collecting) so that censuses are taken.
class CensusFoo
  def initialize(@a : Int64, @b : Int64)
  end
end

class CensusBar
  def initialize(@s : Int64)
  end
end

class CensusBaz
  def initialize(@x : Int64, @y : Int64, @z : Int64, @w : Int64, @v : Int64)
  end
end

nfoo = (ARGV[0]? || "5000").to_i
nbar = (ARGV[1]? || "2000").to_i
nbaz = (ARGV[2]? || "300").to_i

foos = Array(CensusFoo).new(nfoo)
bars = Array(CensusBar).new(nbar)
bazs = Array(CensusBaz).new(nbaz)
nfoo.times { |i| foos << CensusFoo.new(i.to_i64, 1); CensusFoo.new(0, 0) }
nbar.times { |i| bars << CensusBar.new(i.to_i64); CensusBar.new(0) }
nbaz.times { |i| bazs << CensusBaz.new(i.to_i64, 1, 2, 3, 4); CensusBaz.new(0, 0, 0, 0, 0) }
GC.collect
puts "TYPE CensusFoo #{CensusFoo.crystal_instance_type_id} #{foos.size} #{instance_sizeof(CensusFoo)}"
puts "TYPE CensusBar #{CensusBar.crystal_instance_type_id} #{bars.size} #{instance_sizeof(CensusBar)}"
puts "TYPE CensusBaz #{CensusBaz.crystal_instance_type_id} #{bazs.size} #{instance_sizeof(CensusBaz)}"
puts "GC_NO #{LibGC.gc_no}"
STDOUT.flush
# ARGV[3]: seconds to keep running, collecting every 50 ms, for a census
# attached with --pid.
deadline = Time.monotonic + (ARGV[3]? || "0").to_f.seconds
while Time.monotonic < deadline
  GC.collect
  sleep 0.05.seconds
end
3.times { GC.collect }
puts "DONE #{foos.size + bars.size + bazs.size} #{LibGC.gc_no}"
