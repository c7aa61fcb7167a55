# frozen_string_literal: true

require_relative "runtime_helper"
require "lease_machines/fenced_error"

module LeaseMachines
  # The figures the events carry for metrics, on the manual clock: how long
  # a granted hold waited (`waited:`), how long a hold held its lease
  # (`held:`, once per hold, on the event that ends it).
  class EventFiguresTest < Minitest::Test
    include RuntimeHelper

    def test_an_acquire_granted_at_once_waited_nothing
      hold { :ok }
      assert_equal [[:granted, 0.0]], events(:acquire, :status, :waited)
    end

    def test_a_granted_acquire_tells_how_long_its_hold_waited_on_the_clock
      waiter = nil
      in_hold do
        waiter = Thread.new { @store.authority("nightly").hold(owner: 8, ttl: TTL, wait: 60, clock: @clock, &:token) }
        Thread.pass until waiter.status == "sleep"
        @clock.advance(3)
        Thread.pass until waiter.status == "sleep"
      end
      assert_predicate waiter.value, :held?
      granted = events(:acquire).select { |payload| payload[:owner] == 8 && payload[:status] == :granted }
      assert_equal([3.0], granted.map { |payload| payload.fetch(:waited) })
      refused = events(:acquire).select { |payload| payload[:status] == :rejected }
      assert_equal 0.0, refused.first.fetch(:waited), "the first attempt is sent as the hold starts"
    end

    def test_a_release_tells_how_long_the_lease_was_held
      in_hold { @clock.advance(12) }
      assert_equal [[:released, 12.0]], events(:release, :status, :held)
    end

    def test_a_lost_lease_tells_it_once_and_nothing_is_released
      in_hold do
        @clock.advance(10)
        @store.force_release("nightly")
        @clock.advance(10)
      end
      assert_equal [[:stale_token, 20.0]], events(:lost, :reason, :held)
      assert_empty events(:release)
    end

    def test_a_fenced_hold_tells_its_time_on_the_loss_and_not_again_on_the_release
      assert_raises(FencedError) do
        hold do |held|
          @clock.advance(5)
          raise FencedError.new(resource: "nightly", token: held.token, highest: held.token + 1)
        end
      end
      assert_equal [[:fenced, 5.0]], events(:lost, :reason, :held)
      assert_equal [:released], events(:release, :status)
      refute events(:release).first.key?(:held), "one held: per hold"
    end
  end
end
