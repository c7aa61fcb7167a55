# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # What a fence on a database server (PostgreSQL, MySQL) shows the same way
  # on each, run by each engine's URL guard test. An including class provides
  # what GuardContract's classes do (`fences`, `write`), an engine's data
  # module, `unreachable_url` (a URL of the engine where no server listens)
  # and `server_name` (how the engine's errors name it).
  module ServerGuardCases
    def test_an_unreachable_server_raises_store_error
      fences = fence_class.new(unreachable_url)
      error = assert_raises(StoreError) { fences.guard("r", 1) { flunk "ran" } }
      assert_match(/\A#{server_name}: .*\(could not connect\)/m, error.message)
    end

    def test_a_resource_name_with_quotes_and_backslashes_is_written_as_it_is
      resource = %(it's a \\ "name" \\\\'; DROP TABLE fence_reports; --)
      fences.guard(resource, 3) { |conn| write(conn, resource, "quoted") }
      assert_equal 3, fences.highest(resource)
      assert_equal "3", committed_mark_text(resource)
      assert_equal "quoted", committed_body(resource)
    end
  end
end
