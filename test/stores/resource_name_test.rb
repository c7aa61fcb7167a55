# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "lease_machines/stores/sqlite"
require "lease_machines/fences/sqlite"

module LeaseMachines
  # A resource name is its bytes, compared byte for byte and never
  # transcoded, and stores and fences take it by one rule
  # (Stores.resource_name): a String tagged UTF-8, binary or US-ASCII is
  # taken as its bytes (valid UTF-8, no NUL, 1..255 bytes); a String in
  # another encoding only when it is ASCII only, and refused otherwise with
  # an ArgumentError naming the argument, the value and its encoding. Checked
  # on a real store and a real fence (SQLite files), side by side.
  class ResourceNameTest < Minitest::Test
    CAFE = "café"

    def setup
      @dir = Dir.mktmpdir("lease_machines_names")
      @store = Stores::SQLite.new(File.join(@dir, "store.sqlite3")).tap(&:setup!)
      @fences = Fences::SQLite.new(File.join(@dir, "fences.sqlite3")).tap(&:setup!)
    end

    def teardown
      @store.close
      @fences.close
      FileUtils.remove_entry(@dir)
    end

    # The lease's and the fence's view of `name`: the bytes stored, or the
    # error's class and message (with the argument's name left out).
    def outcomes(name)
      store = begin
        @store.authority(name).acquire(owner: 1, ttl: 30)
        @store.statuses.map(&:name).find { |stored| stored.b == name.b }&.b
      rescue ArgumentError, TypeError => e
        [e.class, e.message.delete_prefix("name ")]
      end
      fence = begin
        @fences.guard(name, 1) { nil }
        name.b if @fences.highest(String.new(name.b, encoding: Encoding::UTF_8)) == 1
      rescue ArgumentError, TypeError => e
        [e.class, e.message.delete_prefix("resource ")]
      end
      [store, fence]
    end

    def test_a_binary_or_us_ascii_string_is_taken_as_its_bytes
      [CAFE.b, "#{CAFE}/📈".b, String.new(CAFE, encoding: Encoding::US_ASCII)].each do |name|
        assert_equal [name.b, name.b], outcomes(name), "#{name.inspect} (#{name.encoding})"
      end
      @fences.guard(CAFE.b, 7) { nil }
      assert_equal 7, @fences.highest(CAFE), "the binary name and the UTF-8 one are one fence: same bytes"
      assert_equal 7, @fences.highest(CAFE.b)
    end

    def test_a_name_in_another_encoding_is_refused_not_transcoded
      [CAFE.encode("ISO-8859-1"), CAFE.encode("UTF-16LE"), "中".encode("UTF-16LE"), "Ã©".encode("Windows-1252"),
       "abc".encode("UTF-16BE")].each do |name|
        message = "must be UTF-8, got #{name.inspect} (#{name.encoding}): a name is its bytes, never transcoded; " \
                  "encode it to UTF-8 first"
        assert_equal [[ArgumentError, message]] * 2, outcomes(name), "#{name.inspect} (#{name.encoding})"
      end
      assert_empty @store.statuses, "nothing was written under a refused name"
      assert_nil @fences.highest(CAFE)
    end

    def test_an_ascii_only_name_in_an_ascii_compatible_encoding_is_the_same_bytes
      %w[ISO-8859-1 Windows-1252 Shift_JIS].each do |encoding|
        name = "reports/nightly".encode(encoding)
        assert_equal ["reports/nightly".b] * 2, outcomes(name), encoding
      end
    end

    def test_bytes_that_are_not_utf8_are_refused_whatever_the_tag
      ["caf\xE9".b, String.new("caf\xE9", encoding: Encoding::US_ASCII), "caf\xE9"].each do |name|
        shown = name.encoding == Encoding::UTF_8 ? name.inspect : "#{name.inspect} (#{name.encoding})"
        assert_equal [[ArgumentError, "must be valid UTF-8, got #{shown}"]] * 2, outcomes(name)
      end
    end

    def test_the_one_check_returns_a_frozen_utf8_copy_of_the_bytes
      [CAFE, CAFE.b, +"plain"].each do |name|
        checked = Stores.resource_name(name)
        assert_equal [Encoding::UTF_8, CAFE.b == name.b ? CAFE.b : name.b], [checked.encoding, checked.b]
        assert_predicate checked, :frozen?
        refute_same name, checked unless name.frozen?
      end
      assert_equal "resource must be UTF-8, got \"caf\\xE9\" (ISO-8859-1): a name is its bytes, never transcoded; " \
                   "encode it to UTF-8 first",
                   assert_raises(ArgumentError) { Fences::Pass.new(CAFE.encode("ISO-8859-1"), 1) }.message
    end
  end
end
