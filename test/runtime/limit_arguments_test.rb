# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # `hold(limit:)` given what is not an Integer: refused naming `limit` and
  # the value, before any call. Ill-typed on purpose (rakelib/rbs.rake's ILL_TYPED).
  class LimitArgumentsTest < Minitest::Test
    include RuntimeHelper

    def test_a_limit_that_is_not_an_integer_is_a_type_error_naming_limit_and_the_value
      [2.0, "3", nil, true, 3r].each do |limit|
        raised = assert_raises(TypeError, limit.inspect) { hold(limit: limit) { flunk "not run" } }
        assert_match(/\Alimit must be an Integer from 1 to 256 .*got #{Regexp.escape(limit.inspect)}/, raised.message)
      end
      assert_nil authority.checkpoint.lease
      assert_empty @events, "nothing was called"
    end
  end
end
