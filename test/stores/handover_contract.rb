# frozen_string_literal: true

require_relative "store_helper"

module LeaseMachines
  # Store#await_handover and DurableAuthority#await_handover on both engines,
  # with real processes: a release (or a force release) in one process wakes
  # a waiter in another well before its timeout.
  module HandoverContract
    include StoreTestHelper

    TIMEOUT = 20

    def test_bad_arguments_raise_naming_the_argument
      store = new_store
      [-1, -0.001, Float::NAN, Float::INFINITY, 10**400].each do |seconds|
        error = assert_raises(ArgumentError) { store.await_handover("r", seconds) }
        assert_match(/\Aseconds must be non-negative and finite, got /, error.message)
      end
      [nil, "1", :one, Complex(1, 1)].each do |seconds|
        error = assert_raises(TypeError) { store.await_handover("r", seconds) }
        assert_match(/\Aseconds must be a real Numeric/, error.message)
      end
      assert_match(/\Aname must be a String/, assert_raises(TypeError) { store.await_handover(:r, 1) }.message)
      assert_match(/\Aname must not be empty/, assert_raises(ArgumentError) { store.await_handover("", 1) }.message)
      assert_raises(ArgumentError) { store.authority("r").await_handover(-1) }
    end

    def test_a_release_in_another_process_wakes_the_waiter
      name = unique_name("handover")
      lease = new_store.authority(name).acquire(owner: 1, ttl: 60).lease
      elapsed, woken = with_waiter(name) { new_store.authority(name).release(owner: 1, token: lease.token) }
      assert woken, "the waiter saw the release"
      assert_operator elapsed, :<, TIMEOUT / 4.0, "woken well before the timeout"
    end

    def test_a_release_of_any_of_several_resources_wakes_a_waiter_of_them_all
      names = Array.new(3) { |i| unique_name("handover-any-#{i}") }
      store = new_store
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 60).lease }
      elapsed, woken = with_waiter(names) { new_store.authority(names[2]).release(owner: 1, token: leases[2].token) }
      assert woken, "the waiter of all three saw the third's release"
      assert_operator elapsed, :<, TIMEOUT / 4.0
    end

    def test_several_names_are_each_checked_and_none_is_an_error
      store = new_store
      error = assert_raises(ArgumentError) { store.await_handover([], 1) }
      assert_equal "name must be a resource name or a non-empty Array of them, got []", error.message
      assert_match(/\Aname must be a String/, assert_raises(TypeError) { store.await_handover(["r", :s], 1) }.message)
      refute store.await_handover(%w[r s r], 0)
    end

    def test_a_force_release_in_another_process_wakes_the_waiter
      name = unique_name("handover-force")
      new_store.authority(name).acquire(owner: 1, ttl: 60)
      elapsed, woken = with_waiter(name) { new_store.force_release(name) }
      assert woken
      assert_operator elapsed, :<, TIMEOUT / 4.0
    end

    def test_with_nothing_released_it_returns_false_within_its_time
      store = new_store
      name = unique_name("handover-held")
      store.authority(name).acquire(owner: 1, ttl: 60)
      started = monotonic
      refute store.authority(name).await_handover(0.3)
      assert_operator monotonic - started, :<, 2.0
      refute store.await_handover(name, 0)
    end

    private

    # Forks a waiter for `name` (or names), runs the block once it is waiting, and
    # returns what the waiter saw: [seconds it waited, woken].
    def with_waiter(name)
      reader, writer = IO.pipe
      pid = fork_child do
        reader.close
        store = new_store
        store.await_handover(name, 0) # listening from here on
        writer.write("r")
        writer.flush
        started = monotonic
        woken = wait_in_child(store, name)
        writer.write(Marshal.dump([monotonic - started, woken]))
        writer.close
      end
      writer.close
      read_within(reader, 1)
      sleep 0.05
      yield
      seen = Marshal.load(reader.read) # rubocop:disable Security/MarshalLoad -- our own child's answer
      assert_child_succeeded(pid)
      seen
    ensure
      reader&.close
    end
  end
end
