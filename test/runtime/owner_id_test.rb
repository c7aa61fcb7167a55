# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # LeaseMachines.owner_id: FNV-1a (64-bit) of a name's UTF-8 bytes, computed
  # by the core, and the default id of this host, process and thread.
  class OwnerIdTest < Minitest::Test
    # The FNV-1a 64-bit reference vectors published with the algorithm
    # (Landon Curt Noll's test_fnv.c, fnv1a_64_vector); core/tests/owner_id.rs
    # checks the same ones.
    REFERENCE = {
      "a" => 0xaf63dc4c8601ec8c, "b" => 0xaf63df4c8601f1a5, "c" => 0xaf63de4c8601eff2,
      "d" => 0xaf63d94c8601e773, "e" => 0xaf63d84c8601e5c0, "f" => 0xaf63db4c8601ead9,
      "fo" => 0x08985907b541d342, "foo" => 0xdcb27518fed9d577, "foob" => 0xdd120e790c2512af,
      "fooba" => 0xcac165afa2fef40a, "foobar" => 0x85944171f73967e8
    }.freeze

    def test_matches_the_published_reference_vectors
      REFERENCE.each { |name, id| assert_equal id, LeaseMachines.owner_id(name), name }
    end

    def test_is_the_same_in_another_ruby_process
      names = ["web-1/4242", "job 9f3c", "ünïcødé"]
      script = "require 'lease_machines'; #{names.inspect}.each { |n| puts LeaseMachines.owner_id(n) }"
      output = IO.popen([RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script], &:read)
      assert_equal names.map { |name| LeaseMachines.owner_id(name).to_s }, output.lines(chomp: true)
    end

    def test_the_same_text_in_any_encoding_gives_the_same_id
      text = "café"
      id = LeaseMachines.owner_id(text)
      assert_equal id, LeaseMachines.owner_id(text.encode("ISO-8859-1"))
      assert_equal id, LeaseMachines.owner_id(text.encode("UTF-16LE"))
      assert_equal LeaseMachines.owner_id("plain"), LeaseMachines.owner_id("plain".b), "ASCII bytes are text"
      refute_equal id, LeaseMachines.owner_id("cafe")
    end

    def test_a_name_that_is_not_text_raises_argument_error_naming_it
      {
        "\xFF".b => "ASCII-8BIT", "caf\xE9" => "UTF-8", "" => nil, "".encode("UTF-16LE") => nil
      }.each do |value, encoding|
        error = assert_raises(ArgumentError) { LeaseMachines.owner_id(value) }
        expected = "name must not be empty"
        expected = "name must be text that converts to UTF-8, got #{value.inspect} (#{encoding})" if encoding
        assert_equal expected, error.message
      end
    end

    def test_the_default_is_one_for_this_host_process_and_thread
      id = LeaseMachines.owner_id
      assert_equal id, LeaseMachines.owner_id, "the same thread gets the same id"
      assert_equal LeaseMachines.owner_id("#{Socket.gethostname}/#{Process.pid}/#{Thread.current.object_id}"), id
      refute_equal id, Thread.new { LeaseMachines.owner_id }.value, "another thread gets another id"
      reader, writer = IO.pipe
      pid = fork do
        reader.close
        writer.puts(LeaseMachines.owner_id)
        writer.close
        exit!(0)
      end
      writer.close
      child = Integer(reader.read)
      Process.wait(pid)
      refute_equal id, child, "a forked child gets another id"
    ensure
      reader&.close
    end
  end
end
