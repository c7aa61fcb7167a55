# frozen_string_literal: true

require_relative "metrics_helper"

module LeaseMachines
  # The registry fed by real holds on Stores::Memory, on a manual clock:
  # every counter and histogram read back from the Prometheus text.
  class MemoryMetricsTest < Minitest::Test
    include MetricsHelper

    TTL = 30

    def setup
      super
      @failing = false
      @store = Stores::Memory.new(clock: @clock, before_commit: ->(_commit) { raise StoreError, "down" if @failing })
    end

    def hold(name = "reports/nightly", owner: 7, **options, &block)
      @store.authority(name).hold(owner: owner, ttl: TTL, clock: @clock, **options, &block)
    end

    # Runs a hold in a thread; yields while its block waits.
    def in_hold(name = "reports/nightly", **options)
      inside = Queue.new
      done = Queue.new
      thread = Thread.new do
        hold(name, **options) do
          inside << true
          done.pop
        end
      end
      inside.pop
      yield thread
    ensure
      done << true
      thread&.join(5)
    end

    def test_the_slots_of_a_limit_count_in_their_resources_family
      hold("exports", limit: 3) { hold("exports", owner: 8, limit: 3) { nil } }

      assert_equal 2, @metrics.value("lease_machines_grants_total", family: "exports")
    end

    def test_grants_and_refusals_by_reason_per_family
      2.times { hold { :ok } }
      @store.authority("reports/weekly").acquire(owner: 1, ttl: 600)
      refute_predicate hold("reports/weekly") { flunk "ran" }, :held?
      hold("sync:42") { :ok }

      text = exposition
      assert_equal 2.0, text.value("lease_machines_grants_total", family: "reports")
      assert_equal 1.0, text.value("lease_machines_grants_total", family: "sync")
      assert_equal 1.0, text.value("lease_machines_refusals_total", family: "reports", reason: "occupied")
      assert_equal 3.0, text.value("lease_machines_releases_total", family: "reports", status: "released") +
                        text.value("lease_machines_releases_total", family: "sync", status: "released")
      assert_equal 2, @metrics.value("lease_machines_grants_total", family: "reports")
    end

    def test_a_renewal_sent_late_is_counted_with_its_lateness
      in_hold { @clock.advance(12) } # planned at 10 s, sent at 12 s

      text = exposition
      assert_equal 1.0, text.value("lease_machines_renewals_total", family: "reports", status: "renewed")
      assert_equal [1.0, 2.0], observed("lease_machines_renewal_lateness_seconds", family: "reports")
      assert_equal 0.0, text.value("lease_machines_renewal_lateness_seconds_bucket", family: "reports", le: "1.0")
      assert_equal 1.0, text.value("lease_machines_renewal_lateness_seconds_bucket", family: "reports", le: "2.5")
      assert_equal 1.0, text.value("lease_machines_renewal_lateness_seconds_bucket", family: "reports", le: "+Inf")
    end

    def test_at_risk_and_lost_holds
      in_hold do
        @failing = true # every renewal fails from here
        @clock.advance(23) # past the warning deadline (ttl - ttl / 4 = 22.5 s)
        @clock.advance(8) # past the whole ttl
      end

      text = exposition
      assert_equal 1.0, text.value("lease_machines_at_risk_total", family: "reports")
      assert_equal 1.0, text.value("lease_machines_lost_total", family: "reports", reason: "ttl_elapsed")
      assert_operator text.value("lease_machines_renewals_total", family: "reports", status: "failed",
                                                                  reason: "store_error"), :>=, 1
      assert_equal [1.0, 31.0], observed("lease_machines_held_seconds", family: "reports"),
                   "held until the loss was found: the hold ended at 31 s"
    end

    def test_time_held_is_observed_once_per_hold
      in_hold { @clock.advance(12) }
      hold { :ok }
      assert_equal [2.0, 12.0], observed("lease_machines_held_seconds", family: "reports")
    end

    def test_handover_latency_from_a_release_to_the_next_grant
      hold { :ok }
      @clock.advance(4)
      hold(owner: 8) { :ok }
      assert_equal [1.0, 4.0], observed("lease_machines_handover_seconds", family: "reports")
      assert_equal [2.0, 0.0], observed("lease_machines_acquire_wait_seconds", family: "reports")
    end

    def test_the_wait_of_a_hold_that_waited
      waiter = nil
      in_hold do
        waiter = Thread.new { hold(owner: 8, wait: 60, &:token) }
        Thread.pass until waiter.status == "sleep"
        @clock.advance(3)
        Thread.pass until waiter.status == "sleep"
      end
      assert_predicate waiter.value, :held?
      assert_equal [2.0, 3.0], observed("lease_machines_acquire_wait_seconds", family: "reports")
      assert_equal [1.0, 0.0], observed("lease_machines_handover_seconds", family: "reports"),
                   "taken at the release, with no time passing on the clock"
    end

    def test_an_electors_terms
      terms = Queue.new
      elector = Elector.new(@store.authority("relays/outbox"), owner: 1, clock: @clock,
                                                               on_elected: ->(term) { terms << [:elected, term] },
                                                               on_deposed: ->(term) { terms << [:deposed, term] })
      elector.start
      assert_equal [:elected, 1], terms.pop
      elector.stop
      assert_equal [:deposed, 1], terms.pop

      text = exposition
      assert_equal 1.0, text.value("lease_machines_elections_total", family: "relays")
      assert_equal 1.0, text.value("lease_machines_depositions_total", family: "relays")
    end

    def test_families_are_bounded_and_can_be_turned_off
      bounded = Metrics.new(max_families: 2).install
      flat = Metrics.new(family: false).install
      %w[a/1 b/1 c/1 d/1 a/2].each { |name| hold(name) { :ok } }

      text = exposition(bounded)
      assert_equal({ "a" => 2.0, "b" => 1.0, "other" => 2.0 },
                   text.find("lease_machines_grants_total").to_h { |sample| [sample.labels["family"], sample.value] })
      assert_equal([[{}, 5.0]], exposition(flat).find("lease_machines_grants_total").map { |s| [s.labels, s.value] })
    ensure
      bounded&.uninstall
      flat&.uninstall
    end

    def test_concurrent_holds_are_all_counted
      store = Stores::Memory.new
      threads = Array.new(8) do |index|
        Thread.new { 50.times { |round| store.authority("jobs/#{index}-#{round}").hold(owner: index, ttl: 30) { :ok } } }
      end
      threads.each(&:join)
      assert_equal 400.0, exposition.value("lease_machines_grants_total", family: "jobs")
      assert_equal 400.0, exposition.value("lease_machines_releases_total", family: "jobs", status: "released")
    end

    def test_events_from_many_threads_at_once_are_all_counted
      payload = { resource: "jobs/1", owner: 1, token: 1, status: :renewed, reason: nil, duration: 0.001, late: 0.002 }
      threads = Array.new(8) { Thread.new { 20_000.times { @metrics.call(:renew, payload) } } }
      threads.each(&:join)
      assert_equal 160_000, @metrics.value("lease_machines_renewals_total", family: "jobs", status: "renewed")
      assert_equal 160_000, @metrics.value("lease_machines_renewal_lateness_seconds", family: "jobs").count
    end

    def test_an_uninstalled_registry_counts_nothing_more
      hold { :ok }
      assert @metrics.uninstall
      refute @metrics.uninstall
      hold { :ok }
      assert_equal 1, @metrics.value("lease_machines_grants_total", family: "reports")
    end
  end
end
