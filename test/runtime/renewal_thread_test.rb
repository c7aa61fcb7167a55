# frozen_string_literal: true

require "test_helper"
require "lease_machines/testing"

module LeaseMachines
  # The renewal thread of the runtime's default clock, in real time: it ends
  # about a second (Scheduler::LINGER) after the last hold ends, however far
  # off the next renewal of that hold was planned.
  class RenewalThreadTest < Minitest::Test
    # Real seconds the test waits for the thread, well past LINGER, well
    # short of the renewal the thread would otherwise wait for (100 s).
    GENEROUS = 10

    def test_the_thread_ends_about_a_second_after_the_last_hold_ends
      scheduler = Runtime::Scheduler.for(Runtime::MonotonicClock)
      thread = Stores::Memory.new.authority("nightly").hold(owner: 7, ttl: 300) do
        renewals = scheduler.thread
        Thread.pass until planning_the_next_renewal?(renewals) # it waits for the renewal due in 100 s
        renewals
      end.value
      assert_instance_of Thread, thread, "the hold started the renewal thread"
      assert thread.join(Runtime::Scheduler::LINGER + GENEROUS),
             "the renewal thread was still there #{Runtime::Scheduler::LINGER + GENEROUS} s after the last hold ended"
      assert_nil scheduler.thread
    end

    # A process that takes and gives back leases in a loop does not wake the
    # thread for each: once it lingers, a hold's end leaves it asleep (each
    # linger that ends while a hold is held costs two sleeps more).
    def test_holds_taken_and_given_back_in_a_loop_do_not_wake_the_thread_each_time
      scheduler = Runtime::Scheduler.for(Runtime::MonotonicClock)
      authority = Stores::Memory.new.authority("nightly")
      authority.hold(owner: 7, ttl: 300) { nil }
      renewals = scheduler.thread
      Thread.pass until planning_the_next_renewal?(renewals)
      sleeps = 0
      counting = TracePoint.new(:call) do |point|
        sleeps += 1 if Thread.current.equal?(renewals) && point.method_id == :sleep_until
      end
      counting.enable { 50.times { authority.hold(owner: 7, ttl: 300) { Thread.pass } } }
      assert_operator sleeps, :<=, 10, "the renewal thread went back to sleep #{sleeps} times for 50 holds"
    end

    private

    def planning_the_next_renewal?(thread)
      thread.status == "sleep" && thread.backtrace.to_a.any? { |line| line.include?("sleep_until") }
    end
  end
end
