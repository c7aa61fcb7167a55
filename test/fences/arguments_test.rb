# frozen_string_literal: true

require "bigdecimal" # a bundled gem since Ruby 3.4: nothing else here loads it without the pg gem
require_relative "fence_helper"

module LeaseMachines
  # Bad input to a fence: a clear error naming the argument and the value,
  # raised before anything is sent, never a crash, never a conversion. The
  # token rules and their wording are those of LeaseMachines::Fence#accept.
  class FenceArgumentsTest < Minitest::Test
    include FenceTestHelper
    include FenceTestHelper::SQLiteData

    def fences
      @fences ||= Fences::SQLite.new(@path).tap { |fences| @closing << fences }
    end

    # What the in-memory fence says for the same token, so the wording is the
    # gem's one wording.
    def in_memory_error(token)
      Fence.new.accept(token)
      nil
    rescue TypeError, RangeError => e
      e
    end

    def test_tokens_follow_the_in_memory_fence_word_for_word
      like_an_integer = Object.new
      def like_an_integer.to_int = 1
      liar = Object.new
      def liar.is_a?(_) = true
      bad = ["1", 1.0, 1r, nil, :one, -1, 2**64, -(2**70), like_an_integer, liar, BasicObject.new]
      bad.each do |token|
        expected = in_memory_error(token)
        shown = Fences::Token.describe(token)
        refute_nil expected, "the in-memory fence refuses #{shown}"
        resource = unique_name
        error = assert_raises(expected.class, "guard with #{shown}") { fences.guard(resource, token) { flunk "ran" } }
        assert_equal expected.message, error.message
        assert_equal 0, fence_rows(resource), "a refused argument writes nothing"
      end
    end

    def test_token_zero_and_the_extremes_are_valid_arguments
      assert_raises(FencedError) { fences.guard(unique_name, 0) { flunk "ran" } }
      [1, (2**63) - 1, 2**63, U64_MAX].each { |token| assert_equal token, fences.guard(unique_name, token) { token } }
    end

    def test_a_resource_that_is_no_object_at_all_is_described_safely
      error = assert_raises(TypeError) { fences.guard(BasicObject.new, 1) { flunk "ran" } }
      assert_match(/\Aresource must be a String \(the resource name\), got #<BasicObject:0x\h+> \(BasicObject\)\z/, error.message)
    end

    def test_resource_names_follow_the_stores_rules_and_name_the_argument
      cases = {
        nil => [TypeError, "resource must be a String (the resource name), got nil (NilClass)"],
        :nightly => [TypeError, "resource must be a String (the resource name), got :nightly (Symbol)"],
        42 => [TypeError, "resource must be a String (the resource name), got 42 (Integer)"],
        "" => [ArgumentError, 'resource must not be empty, got ""'],
        "a\0b" => [ArgumentError, 'resource must not contain NUL bytes, got "a\u0000b"'],
        "\xFF".b.force_encoding(Encoding::UTF_8) => [ArgumentError, 'resource must be valid UTF-8, got "\xFF"'],
        "x" * 256 => [ArgumentError, "resource must be at most 255 bytes, got 256 bytes: #{('x' * 40).inspect}..."]
      }
      cases.each do |resource, (klass, message)|
        [-> { fences.guard(resource, 1) { flunk "ran" } }, -> { fences.highest(resource) }].each do |call|
          error = assert_raises(klass, resource.inspect) { call.call }
          assert_equal message, error.message
        end
      end
      assert_equal 1, fences.guard("é" * 127, 1) { 1 }, "255 bytes of UTF-8 are fine"
      latin = "caf\xE9".b.force_encoding(Encoding::ISO_8859_1)
      error = assert_raises(ArgumentError) { fences.guard(latin, 2) { flunk "ran" } }
      assert_equal 'resource must be UTF-8, got "caf\xE9" (ISO-8859-1): a name is its bytes, never transcoded; ' \
                   "encode it to UTF-8 first", error.message
      fences.guard("café".b, 2) { nil }
      assert_equal 2, fences.highest("café"), "names are compared byte for byte (test/stores/resource_name_test.rb)"
    end

    def test_connections_of_the_wrong_kind_are_refused_when_the_fence_is_made
      error = assert_raises(TypeError) { Fences::SQLite.new(42) }
      assert_equal "connection must be a database path String, an SQLite3::Database or ActiveRecord " \
                   "(ActiveRecord::Base, a model class, a pool or a connection), got 42", error.message
      error = assert_raises(TypeError) { Fences::Postgres.new(nil) }
      assert_equal "connection must be a PG::Connection, a connection URL String, a pool responding to #with, " \
                   "or ActiveRecord (ActiveRecord::Base, a model class, a pool or a connection), got nil", error.message
      assert_raises(TypeError) { Fences::Postgres.new(SQLite3::Database.new(":memory:")) }
    end

    def test_the_table_refuses_a_hand_written_mark_that_is_not_a_token
      with_sqlite do |db|
        ["5", "", "-0000000000000000001", "1844674407370955161X", "18446744073709551616", "0000000000000000000001"].each do |bad|
          assert_raises(SQLite3::ConstraintException, bad.inspect) do
            db.execute("INSERT INTO lease_machines_fences (resource, highest) VALUES (?, ?)", [unique_name, bad])
          end
        end
      end
    end

    def test_a_stored_value_that_is_not_a_token_raises_store_error_naming_it
      ["5x", "", "-1", "18446744073709551616", 1.5, 2**64, -1].each do |bad|
        error = assert_raises(StoreError, bad.inspect) { Fences::StoredToken.read(bad, "fence_reports#lease_token") }
        assert_equal "fence_reports#lease_token holds #{bad.inspect}, which is not a token (an Integer in #{OWNER_RANGE})",
                     error.message
      end
      good = [nil, "0", "00000000000000000005", "18446744073709551615", U64_MAX, BigDecimal("7")]
      assert_equal([nil, 0, 5, U64_MAX, U64_MAX, 7], good.map { |value| Fences::StoredToken.read(value, "x") })
    end
  end

  class PostgresFenceTableTest < Minitest::Test
    include FenceTestHelper
    include FenceTestHelper::PostgresData

    def test_the_table_refuses_a_hand_written_mark_that_is_not_a_token
      [-1, 2**64, 10**25].each do |bad|
        assert_raises(PG::CheckViolation, PG::NumericValueOutOfRange, bad.inspect) do
          @admin.exec_params("INSERT INTO lease_machines_fences (resource, highest) VALUES ($1, $2)", [unique_name, bad.to_s])
        end
      end
    end
  end
end
