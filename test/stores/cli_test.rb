# frozen_string_literal: true

require_relative "store_helper"
require "json"
require "open3"
require "rbconfig"

module LeaseMachines
  # exe/lease_machines, run as a subprocess the way an operator runs it.
  class CLITest < Minitest::Test
    include StoreTestHelper

    ROOT = File.expand_path("../..", __dir__)
    EXE = File.join(ROOT, "exe", "lease_machines")
    USAGE_LINE = /^Usage: lease_machines \[--store STORE\] .*status \[RESOURCE \| --match GLOB\] .*\(see --help\)$/

    def setup
      @dir = Dir.mktmpdir("lease_machines_cli")
      @path = File.join(@dir, "leases.sqlite3")
      @store = Stores::SQLite.new(@path).setup!
    end

    def teardown
      @store.close
      FileUtils.rm_rf(@dir)
    end

    def test_status_of_every_resource
      @store.authority("nightly_report").acquire(owner: 7, ttl: 60)
      @store.authority("cleanup").acquire(owner: 3, now: 1, ttl: 1)
      @store.authority("released").release(owner: 1,
                                           token: @store.authority("released").acquire(owner: 1, ttl: 9).lease.token)

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status")
      assert_equal 0, status.exitstatus, err
      lines = out.lines.map(&:rstrip)
      assert_equal %w[RESOURCE HOLDER TOKEN EXPIRES IN LAST ISSUED], lines.first.split
      assert_match(/\Acleanup\s+3\s+1\s+expired \d+\.\d{3}s ago\s+1\z/, lines[1])
      held = lines[2].match(/\Anightly_report\s+7\s+1\s+(\d+\.\d{3})s\s+1\z/)

      refute_nil held, lines[2]
      # What is left of the 60 s: less the CLI's own start, which a loaded machine can make seconds long.
      assert_includes 30.0..60.0, Float(held[1])
      assert_match(/\Areleased\s+-\s+-\s+-\s+1\z/, lines[3])
      assert_equal 4, lines.size
    end

    def test_status_of_one_resource_as_json
      lease = @store.authority("nightly_report").acquire(owner: U64_MAX, ttl: 60).lease
      out, err, status = lease_machines("status", "nightly_report", "--json", "--store", "sqlite:#{@path}")
      assert_equal 0, status.exitstatus, err
      report = JSON.parse(out)
      assert_equal 1, report.size
      entry = report.first
      assert_equal({ "resource" => "nightly_report", "holder" => U64_MAX, "token" => 1, "held" => true,
                     "last_issued" => 1, "expires_at_ns" => lease.expires_at_ns },
                   entry.slice("resource", "holder", "token", "held", "last_issued", "expires_at_ns"))
      assert_in_delta 60.0, entry.fetch("expires_in"), 5.0
    end

    # The holder column shows the holder's label, or its owner id when it
    # gave none; --json has both (label null without one).
    def test_status_shows_the_holders_label
      @store.authority("labelled").acquire(owner: 7, ttl: 60, label: "web-1 pid 4242 job=ReportJob jid=7f3a")
      @store.authority("plain").acquire(owner: 3, ttl: 60)
      @store.authority("released").release(owner: 1, token: @store.authority("released")
                                                                  .acquire(owner: 1, ttl: 9, label: "gone").lease.token)

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status")
      assert_equal 0, status.exitstatus, err
      lines = out.lines.map(&:rstrip)
      assert_match(/\Alabelled\s+web-1 pid 4242 job=ReportJob jid=7f3a\s+1\s+\d+\.\d{3}s\s+1\z/, lines[1])
      assert_match(/\Aplain\s+3\s+1\s+\d+\.\d{3}s\s+1\z/, lines[2])
      assert_match(/\Areleased\s+-\s+-\s+-\s+1\z/, lines[3])

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status", "--json")
      assert_equal 0, status.exitstatus, err
      report = JSON.parse(out).to_h { |entry| [entry.fetch("resource"), entry.slice("holder", "label")] }
      assert_equal({ "labelled" => { "holder" => 7, "label" => "web-1 pid 4242 job=ReportJob jid=7f3a" },
                     "plain" => { "holder" => 3, "label" => nil }, "released" => { "holder" => nil, "label" => nil } },
                   report)

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "release", "labelled", "--force")
      assert_equal 0, status.exitstatus, err
      assert_match(/\Areleased labelled: cleared the lease of owner 7 \(web-1 pid 4242 job=ReportJob jid=7f3a\) /, out)
    end

    def test_release_force_clears_the_lease_and_fences_the_old_holder
      authority = @store.authority("nightly_report")
      authority.acquire(owner: 7, ttl: 60)
      out, err, status = lease_machines("--store", "sqlite:#{@path}", "release", "nightly_report", "--force")
      assert_equal 0, status.exitstatus, err
      assert_match(/\Areleased nightly_report: cleared the lease of owner 7 \(token 1, expires in \d+\.\d{3}s\); /, out)
      assert_nil authority.checkpoint.lease
      assert_equal 1, authority.checkpoint.last_issued
      assert_equal Decision.rejected(:stale_token), authority.renew(owner: 7, token: 1, ttl: 60)
      assert_equal 2, authority.acquire(owner: 8, ttl: 60).lease.token

      @store.force_release("nightly_report")
      out, _err, status = lease_machines("--store", "sqlite:#{@path}", "release", "nightly_report", "--force")
      assert_equal 0, status.exitstatus
      assert_equal "nightly_report has no lease to release (last issued 2)\n", out
    end

    def test_an_unknown_resource_or_database_is_a_failure
      _out, err, status = lease_machines("--store", "sqlite:#{@path}", "status", "missing")
      assert_equal 1, status.exitstatus
      assert_equal "lease_machines: no resource named \"missing\" in this store\n", err
      _out, err, status = lease_machines("--store", "sqlite:#{@path}", "release", "missing", "--force")
      assert_equal 1, status.exitstatus
      assert_match(/no resource named "missing"/, err)
      _out, err, status = lease_machines("--store", "sqlite:#{File.join(@dir, 'nope.sqlite3')}", "status")
      assert_equal 3, status.exitstatus
      assert_match(/no SQLite database at/, err)
      refute File.exist?(File.join(@dir, "nope.sqlite3")), "status never creates a database"
    end

    def test_bad_arguments_print_the_usage_line_and_exit_with_status_two
      store = "sqlite:#{@path}"
      [
        [[], /missing command/],
        [["status"], /missing --store/],
        [["--store", store], /missing command/],
        [["--store", store, "frobnicate"], /unknown command "frobnicate"/],
        [["--store", store, "status", "a", "b"], /status takes at most one RESOURCE, got 2/],
        [["--store", store, "status", "--force"], /--force only applies to release/],
        [["--store", store, "release"], /release takes exactly one RESOURCE, got 0/],
        [["--store", store, "release", "nightly_report"], /confirm with --force/],
        [["--store", store, "status", "x" * 256], /bad RESOURCE: name must be at most 255 bytes/],
        [["--store", "redis://db/app", "status"], %r{--store must be sqlite:PATH, sqlite3:PATH, postgres://... or mysql2://}],
        [["--store"], /missing argument: --store/],
        [["--bogus"], /invalid option: --bogus/]
      ].each do |args, message|
        out, err, status = lease_machines(*args)
        assert_equal 2, status.exitstatus, "#{args.inspect}: #{err}"
        assert_empty out, args.inspect
        assert_match message, err, args.inspect
        assert_match(USAGE_LINE, err, args.inspect)
      end
    end

    def test_help_and_version_succeed
      out, _err, status = lease_machines("--help")
      assert_equal 0, status.exitstatus
      assert_match(/release RESOURCE --force/, out)
      out, _err, status = lease_machines("--version")
      assert_equal 0, status.exitstatus
      assert_equal "lease_machines #{VERSION}\n", out
    end

    def test_the_store_may_come_from_the_environment
      @store.authority("nightly_report").acquire(owner: 5, ttl: 60)
      environment = { "LEASE_MACHINES_STORE" => "sqlite:#{@path}" }
      out, err, status = lease_machines("status", "nightly_report", env: environment)
      assert_equal 0, status.exitstatus, err
      assert_match(/^nightly_report\s+5\s+1\s/, out)
    end

    def test_an_unreadable_row_is_reported_and_the_others_are_listed
      @store.authority("a_good").acquire(owner: 7, ttl: 60)
      @store.authority("b_bad").acquire(owner: 8, ttl: 60)
      @store.authority("c_good").acquire(owner: 9, ttl: 60)
      db = SQLite3::Database.new(@path)
      db.execute("UPDATE lease_machines_resources SET updated_at = 'garbage' WHERE name = 'b_bad'")
      db.close

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status", "b_bad")
      assert_equal 1, status.exitstatus
      assert_empty out
      assert_match(/\Alease_machines: .*resource "b_bad" has an unreadable updated_at "garbage"/, err)
      refute_match(/\.rb:\d+/, err, "a message, not a backtrace")

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status")
      assert_equal 1, status.exitstatus
      lines = out.lines.map(&:rstrip)
      assert_match(/\Aa_good\s+7\s+1\s/, lines[1])
      assert_match(/\Ab_bad\s+\?\s+\?\s+unreadable\s+\?\z/, lines[2])
      assert_match(/\Ac_good\s+9\s+1\s/, lines[3])
      assert_equal 4, lines.size
      assert_match(/\Alease_machines: resource "b_bad" cannot be read: .*unreadable updated_at "garbage"/, err)
      refute_match(/\.rb:\d+/, err)

      out, _err, status = lease_machines("--store", "sqlite:#{@path}", "status", "--json")
      assert_equal 1, status.exitstatus
      report = JSON.parse(out)
      assert_equal(%w[a_good b_bad c_good], report.map { |entry| entry.fetch("resource") })
      assert_match(/unreadable updated_at/, report[1].fetch("error"))
      assert_equal 9, report[2].fetch("holder")
    end

    def test_a_name_that_is_utf8_under_lc_all_c_can_be_inspected_and_released
      name = "r\u00e9sum\u00e9_\u65e5\u672c"
      @store.authority(name).acquire(owner: 7, ttl: 60)
      environment = { "LC_ALL" => "C", "LANG" => nil }
      out, err, status = lease_machines("--store", "sqlite:#{@path}", "status", name, env: environment)
      assert_equal 0, status.exitstatus, err
      assert_match(/\A#{name.b}\s+7\s+1\s/n, out.b.lines[1])
      _out, err, status = lease_machines("--store", "sqlite:#{@path}", "release", name, "--force", env: environment)
      assert_equal 0, status.exitstatus, err
      assert_nil @store.status(name).lease
    end

    def test_invalid_utf8_arguments_print_usage_and_exit_with_status_two
      store = "sqlite:#{@path}"
      bad = "bad\xFF\xFEname".b
      [{}, { "LC_ALL" => "C", "LANG" => nil }, { "LC_ALL" => "C.UTF-8" }].each do |environment|
        [["--store", store, "status", bad], ["--store", store, "release", bad, "--force"],
         ["--store", store, "status", "--json", bad], [bad]].each do |args|
          out, err, status = lease_machines(*args, env: environment)
          assert_equal 2, status.exitstatus, "#{environment} #{args.inspect}: #{err}"
          assert_empty out
          assert_match(USAGE_LINE, err)
          refute_match(/\.rb:\d+/, err, "no backtrace")
        end
      end
      _out, err, = lease_machines("--store", store, "status", bad)
      assert_match(/bad RESOURCE: name must be valid UTF-8/, err)
    end

    def test_messages_quote_at_most_a_hundred_characters_of_a_name
      long = "x" * 250
      _out, err, status = lease_machines("--store", "sqlite:#{@path}", "status", long)
      assert_equal 1, status.exitstatus
      assert_includes err, "#{('x' * 100).inspect}..."
      refute_includes err, "x" * 101
      [["status", "\xFF#{'y' * 300}".b], ["status", "\u00e9" * 300], ["y" * 300]].each do |args|
        _out, err, status = lease_machines("--store", "sqlite:#{@path}", *args)
        assert_equal 2, status.exitstatus, err
        assert_operator err.lines.first.length, :<, 260, err.lines.first
      end
    end

    def test_postgres_status_and_release
      url = StoreTestHelper::PostgresServer.url
      store = Stores::Postgres.new(url)
      name = unique_name("cli")
      store.authority(name).acquire(owner: 2**63, ttl: 60)
      out, err, status = lease_machines("--store", url, "status", name)
      assert_equal 0, status.exitstatus, err
      assert_match(/^#{name}\s+9223372036854775808\s+1\s+\d+\.\d{3}s\s+1$/, out)
      store.authority(name).reacquire(owner: 2**63, ttl: 60, label: "db-1 pid 9 job=Export")
      out, err, status = lease_machines("--store", url, "status", name)
      assert_equal 0, status.exitstatus, err
      assert_match(/^#{name}\s+db-1 pid 9 job=Export\s+2\s+\d+\.\d{3}s\s+2$/, out)
      _out, err, status = lease_machines("--store", url, "release", name, "--force")
      assert_equal 0, status.exitstatus, err
      assert_nil store.authority(name).checkpoint.lease
      assert_equal 2, store.authority(name).checkpoint.last_issued
    ensure
      store&.close
    end

    private

    def lease_machines(*args, env: {})
      environment = { "LEASE_MACHINES_STORE" => nil }.merge(env)
      Open3.capture3(environment, RbConfig.ruby, "-I", File.join(ROOT, "lib"), EXE, *args)
    end
  end
end
