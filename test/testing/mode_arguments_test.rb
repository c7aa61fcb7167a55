# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines/testing"

module LeaseMachines
  # The test modes' block forms called without a block (ill-typed on
  # purpose: rakelib/rbs.rake's ILL_TYPED).
  class ModeArgumentsTest < Minitest::Test
    def test_a_block_form_without_a_block_says_which_to_call_and_switches_nothing
      %i[bypass occupied fenced].each do |mode|
        error = assert_raises(ArgumentError) { Testing.public_send(mode) }

        assert_equal "LeaseMachines::Testing.#{mode} needs a block (or call #{mode}!)", error.message
        assert_nil Testing.mode
      end
    end
  end
end
