# frozen_string_literal: true

require_relative "runtime_helper"
require "json"
require "open3"

module LeaseMachines
  # The runtime's events: LeaseMachines.subscribe, and ActiveSupport::Notifications
  # only when the application loaded it (in a separate Ruby, so this suite's
  # own loading decides nothing).
  class EventsTest < Minitest::Test
    include RuntimeHelper

    def test_every_state_change_is_an_event_with_the_documented_payload
      in_hold do
        @clock.advance(10)
        @store.force_release("nightly")
        @clock.advance(10)
      end
      assert_equal %i[acquire renew renew lost], @events.map(&:first)
      acquire = events(:acquire).first
      assert_equal({ resource: "nightly", owner: 7, token: 1, status: :granted, reason: nil }, acquire.slice(*KEYS))
      assert_kind_of Float, acquire.fetch(:duration)
      assert_predicate acquire, :frozen?
      assert_equal [%i[renewed] + [nil], %i[rejected stale_token]], events(:renew, :status, :reason)
      assert_equal [[:expired, :stale_token, 1]], events(:lost, :status, :reason, :token)
    end

    def test_a_subscriber_that_raises_is_reported_and_the_hold_goes_on
      failing = LeaseMachines.subscribe { |_name, _payload| raise IOError, "subscriber broke" }
      warning = capture_log { assert_equal :ok, hold { :ok }.value }
      assert_match(/an event subscriber raised on acquire: IOError: subscriber broke/, warning)
    ensure
      LeaseMachines.unsubscribe(failing)
    end

    def test_a_holds_tags_go_with_its_events_and_its_log_lines
      tags = { job: "NightlyReport", jid: "4f1c" }
      warning = capture_log do
        hold(tags: tags) { @store.force_release("nightly") }
      end

      assert_equal [tags, tags], events(:acquire, :tags) + events(:release, :tags)
      assert_match(/releasing "nightly" job=NightlyReport jid=4f1c \(token 1\) was refused: stale_token/, warning)
      hold { :ok }

      refute events(:acquire).last.key?(:tags), "a hold without tags gives none"
    end

    def test_unsubscribe_says_whether_it_was_subscribed
      assert LeaseMachines.unsubscribe(@subscriber)
      refute LeaseMachines.unsubscribe(@subscriber)
    end

    def test_active_support_notifications_get_the_events_when_loaded
      # As an application loads it (ActiveSupport 7.2's notifications need the
      # rest of active_support first).
      output = run_ruby(<<~RUBY)
        require "active_support"
        require "active_support/notifications"
        require "lease_machines/testing"
        ActiveSupport::Notifications.subscribe(/lease_machines/) { |name, *, payload| puts [name, payload[:status]].join(" ") }
        LeaseMachines::Stores::Memory.new.authority("nightly").hold(owner: 1, ttl: 30) { }
      RUBY
      assert_equal ["acquire.lease_machines granted", "release.lease_machines released"], output.lines(chomp: true)
    end

    # A Rails app loads ActiveSupport::Notifications whether or not anyone listens to the gem's events: a hold
    # builds none that nobody hears (objects allocated a hold, over 200 holds).
    def test_loading_active_support_alone_builds_no_event
      output = run_ruby(<<~RUBY)
        require "lease_machines/testing"
        authority = LeaseMachines::Stores::Memory.new.authority("nightly")
        per_hold = lambda do
          20.times { authority.hold(owner: 1, ttl: 30) { } }
          before = GC.stat(:total_allocated_objects)
          200.times { authority.hold(owner: 1, ttl: 30) { } }
          (GC.stat(:total_allocated_objects) - before) / 200.0
        end
        alone = per_hold.call
        require "active_support"
        require "active_support/notifications"
        loaded = per_hold.call
        ActiveSupport::Notifications.subscribe("release.lease_machines") { }
        release_heard = per_hold.call
        puts [loaded - alone, release_heard - loaded].map { |extra| extra.round(1) }.inspect
      RUBY
      loaded, release_heard = JSON.parse(output.lines.last)
      assert_operator loaded, :<, 1, "objects a hold allocated more once ActiveSupport was loaded, no one listening"
      assert_operator release_heard, :>=, 2, "a listener of the release event gets it built"
    end

    def test_active_support_listeners_decide_which_events_are_built
      output = run_ruby(<<~RUBY)
        require "active_support"
        require "active_support/notifications"
        require "lease_machines/testing"
        heard = -> { %i[acquire release lost].select { |name| LeaseMachines::Events.listened?(name) } }
        p heard.call
        exact = ActiveSupport::Notifications.subscribe("acquire.lease_machines") { }
        p heard.call
        ActiveSupport::Notifications.unsubscribe(exact)
        ActiveSupport::Notifications.subscribe(/lease_machines/) { }
        p heard.call
      RUBY
      assert_equal ["[]", "[:acquire]", "[:acquire, :release, :lost]"], output.lines(chomp: true)
    end

    def test_active_support_is_never_loaded_by_the_gem
      output = run_ruby(<<~RUBY)
        require "lease_machines/testing"
        LeaseMachines::Stores::Memory.new.authority("nightly").hold(owner: 1, ttl: 30) { }
        puts defined?(ActiveSupport).inspect
      RUBY
      assert_equal "nil", output.chomp
    end

    KEYS = %i[resource owner token status reason].freeze

    private

    def run_ruby(script)
      output, status = Open3.capture2e(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script)
      assert_predicate status, :success?, output
      output
    end
  end
end
