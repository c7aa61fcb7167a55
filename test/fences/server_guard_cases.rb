# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # What a fence on a database server (PostgreSQL, MySQL) shows the same way
  # on each, run by each engine's URL guard test. An including class provides
  # what GuardContract's classes do (`fences`, `write`) and an engine's data
  # module.
  module ServerGuardCases
    def test_a_resource_name_with_quotes_and_backslashes_is_written_as_it_is
      resource = %(it's a \\ "name" \\\\'; DROP TABLE fence_reports; --)
      fences.guard(resource, 3) { |conn| write(conn, resource, "quoted") }
      assert_equal 3, fences.highest(resource)
      assert_equal "3", committed_mark_text(resource)
      assert_equal "quoted", committed_body(resource)
    end
  end
end
