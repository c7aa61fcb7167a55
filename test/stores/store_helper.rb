# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/stores/sqlite"
require "fileutils"
require "io/wait"
require "securerandom"
require "tempfile"
require "timeout"
require "tmpdir"
require_relative "../support/limits"

module LeaseMachines
  # Shared helpers for the store suite (test/stores). Independent of
  # test/test_helper.rb; the integer limits are the suite's one definition
  # (test/support/limits.rb).
  module StoreTestHelper
    include TestLimits

    # The values every u64 column must round-trip.
    EXTREMES = [0, 1, (2**63) - 1, 2**63, U64_MAX].freeze
    DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:54329/lease_machines_test"

    # The PostgreSQL server of the tests: DATABASE_URL, else the URL
    # `script/postgres start` prints. Each test process works in a schema of
    # its own (through search_path), dropped when the suite ends, so it never
    # sees another process's rows.
    module PostgresServer
      class << self
        def base_url
          ENV.fetch("DATABASE_URL", DEFAULT_DATABASE_URL)
        end

        def schema
          @schema ||= "lm_store_test_#{Process.pid}_#{SecureRandom.hex(3)}"
        end

        # The URL with this process's schema first on the search_path.
        def url
          @url ||= begin
            target = "#{base_url}#{base_url.include?('?') ? '&' : '?'}options=-c%20search_path%3D#{schema}"
            prepare_schema(target)
            target
          end
        end

        # A new connection; fails (never skips) with what to do when the server is down.
        # The pg gem is loaded here (and the PostgreSQL store by its autoload),
        # not when this file is: the SQLite and memory files then run where no
        # pg gem is built for the running Ruby (Ruby 3.4: script/matrix ruby34).
        def connect(target = url)
          require "pg"
          PG.connect(target)
        rescue PG::ConnectionBad => e
          raise "PostgreSQL is not reachable at #{base_url}: #{e.message.strip}\n" \
                "Start the test server with `script/postgres start` (bin/test starts it), or set DATABASE_URL."
        end

        private

        def prepare_schema(target)
          conn = connect(base_url)
          conn.exec("SET client_min_messages = warning")
          conn.exec("CREATE SCHEMA IF NOT EXISTS #{schema}")
          conn.close
          Stores::Postgres.new(target).tap(&:setup!).close
          owner = Process.pid
          Minitest.after_run { drop_schema if Process.pid == owner }
        end

        def drop_schema
          conn = PG.connect(base_url)
          conn.exec("SET client_min_messages = warning")
          conn.exec("DROP SCHEMA IF EXISTS #{schema} CASCADE")
          conn.close
        rescue PG::Error
          nil
        end
      end
    end

    # The store suite tests databases, processes and transactions, not the
    # extension's handling of Ruby objects, and makes thousands of decisions in
    # forked children: under GC.stress (`rake test:gc_stress`, which
    # test/test_helper.rb applies to every Minitest::Test once it is loaded)
    # it would run for hours. It always runs with the collector as usual.
    def before_setup
      super
      GC.stress = false
    end

    # Ends a PostgreSQL backend with pg_terminate_backend (from @admin, a
    # PG::Connection) and waits until it is gone.
    def terminate(backend)
      @admin.exec_params("SELECT pg_terminate_backend($1)", [backend])
      wait_for { activity(backend, "pid").nil? }
    end

    # One column of a backend's pg_stat_activity row (nil when it is gone). The
    # snapshot is cleared first: @admin may be inside a transaction, where
    # PostgreSQL would otherwise keep showing the first snapshot it took.
    def activity(backend, column)
      @admin.exec("SELECT pg_stat_clear_snapshot()")
      @admin.exec_params("SELECT #{column}::text FROM pg_stat_activity WHERE pid = $1", [backend]).values.dig(0, 0)
    end

    # Waits until the block is true; fails after `timeout` seconds.
    def wait_for(timeout: 10)
      deadline = monotonic + timeout
      until yield
        flunk "condition not met within #{timeout} s" if monotonic > deadline
        sleep 0.01
      end
    end

    # A resource name no other test uses.
    def unique_name(prefix = "resource")
      "#{prefix}-#{SecureRandom.hex(6)}"
    end

    # Forks a child running the block; the child exits 0 when the block
    # returns, 1 when it raises (printing the error, and leaving it for
    # {assert_child_succeeded}), and never runs the parent's at_exit hooks
    # (minitest's among them).
    def fork_child
      report = Tempfile.create("lease_machines-child")
      pid = fork do
        status = 1
        begin
          yield
          status = 0
        rescue Exception => e # rubocop:disable Lint/RescueException -- report anything from the child
          message = "#{e.class}: #{e.message}\n  #{e.backtrace&.first(8)&.join("\n  ")}"
          warn "child #{Process.pid}: #{message}"
          report.write(message)
        ensure
          report.flush
          $stdout.flush
          $stderr.flush
          Process.exit!(status)
        end
      end
      (@child_reports ||= {})[pid] = report
      pid
    end

    # Waits for a child (killing it after `timeout` seconds); returns its Process::Status.
    def wait_child(pid, timeout: 30)
      deadline = monotonic + timeout
      loop do
        _, status = Process.waitpid2(pid, Process::WNOHANG)
        return status if status

        if monotonic > deadline
          Process.kill(:KILL, pid)
          Process.waitpid2(pid)
          flunk "child #{pid} did not finish within #{timeout} s"
        end
        sleep 0.01
      end
    end

    # Waits for a child of {fork_child} and fails with what it raised unless it succeeded.
    def assert_child_succeeded(pid, timeout: 30)
      status = wait_child(pid, timeout: timeout)
      report = @child_reports&.delete(pid)
      raised = report && File.read(report.path)
      report&.close
      File.unlink(report.path) if report
      assert_predicate status, :success?, "child #{pid} (#{status}) raised #{raised}"
    end

    # Reads `bytes` from `io`, failing after `timeout` seconds.
    def read_within(io, bytes, timeout: 10)
      flunk "nothing arrived within #{timeout} s" unless io.wait_readable(timeout)
      io.read(bytes)
    end

    # The block's values and, last, the seconds it took.
    def timed
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = yield
      [*result, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
    end

    def monotonic
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def realtime_ns
      Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
    end
  end
end
