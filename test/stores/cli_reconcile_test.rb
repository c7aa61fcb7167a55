# frozen_string_literal: true

require_relative "store_helper"
require "json"
require "open3"
require "rbconfig"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"

module LeaseMachines
  # `lease_machines reconcile`, run as a subprocess the way an operator runs
  # it after a failover (MySQL: mysql_cli_test.rb).
  class CLIReconcileTest < Minitest::Test
    include StoreTestHelper

    ROOT = File.expand_path("../..", __dir__)
    EXE = File.join(ROOT, "exe", "lease_machines")

    def setup
      @dir = Dir.mktmpdir("lease_machines_cli")
      @path = File.join(@dir, "leases.sqlite3")
      @store = Stores::SQLite.new(@path).setup!
      @fences = Fences::SQLite.new(@path).setup!
    end

    def teardown
      @fences.close
      @store.close
      FileUtils.rm_rf(@dir)
    end

    def test_reconcile_raises_what_the_fences_saw_and_says_so
      stale = @store.authority("reports/nightly").acquire(owner: 1, ttl: 60).lease
      @fences.guard("reports/nightly", 5, owner: 7) { nil }
      @fences.guard("cleanup", 2) { nil }

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "reconcile")
      assert_equal [0, ""], [status.exitstatus, err]
      assert_equal ["cleanup: raised last issued from - to 2, the fence's mark 2",
                    "reports/nightly: raised last issued from 1 to 5, the fence's mark 5 (owner 7); cleared the " \
                    "lease of owner 1 (token #{stale.token}), which the fence refuses"], out.lines.map(&:chomp)
      assert_equal 6, @store.authority("reports/nightly").acquire(owner: 2, ttl: 60).lease.token

      out, err, status = lease_machines("--store", "sqlite:#{@path}", "--json", "reconcile")
      assert_equal [0, ""], [status.exitstatus, err]
      assert_equal [{ "resource" => "cleanup", "mark" => 2, "mark_owner" => nil, "last_issued_before" => 2,
                      "last_issued" => 2, "raised" => false, "voided" => nil },
                    { "resource" => "reports/nightly", "mark" => 5, "mark_owner" => 7, "last_issued_before" => 6,
                      "last_issued" => 6, "raised" => false, "voided" => nil }], JSON.parse(out)
    end

    def test_reconcile_reads_the_fences_of_another_database
      elsewhere = File.join(@dir, "app.sqlite3")
      Fences::SQLite.new(elsewhere).setup!.tap { |fences| fences.guard("nightly", 9) { nil } }.close
      out, err, status = lease_machines("--store", "sqlite:#{@path}", "reconcile", "--fences", "sqlite:#{elsewhere}")
      assert_equal [0, ""], [status.exitstatus, err]
      assert_equal "nightly: raised last issued from - to 9, the fence's mark 9\n", out
      no_fences = File.join(@dir, "leases_only.sqlite3")
      Stores::SQLite.new(no_fences).setup!.close
      out, err, status = lease_machines("--store", "sqlite:#{@path}", "reconcile", "--fences", "sqlite:#{no_fences}")
      assert_equal [3, ""], [status.exitstatus, out]
      assert_match(/no such table: lease_machines_fences.*fences.setup!/, err)
    end

    def test_nothing_to_reconcile_and_the_failures
      out, err, status = lease_machines("--store", "sqlite:#{@path}", "reconcile")
      assert_equal [0, "no marks in the fences: nothing to reconcile\n", ""], [status.exitstatus, out, err]

      _out, err, status = lease_machines("--store", "sqlite:#{@path}", "reconcile", "--fences",
                                         "sqlite:#{@dir}/missing.sqlite3")
      assert_equal 3, status.exitstatus
      assert_match(/no SQLite database at/, err)
      {
        %w[reconcile nightly] => "reconcile takes no RESOURCE, got 1",
        %w[reconcile --force] => "--force only applies to release",
        %w[status --fences sqlite:x] => "--fences only applies to reconcile",
        %w[reconcile --fences redis://x] => "--fences must be sqlite:PATH, sqlite3:PATH, postgres://... or " \
                                            'mysql2://..., got "redis://x"'
      }.each do |args, message|
        _out, err, status = lease_machines("--store", "sqlite:#{@path}", *args)
        assert_equal [2, "lease_machines: #{message}"], [status.exitstatus, err.lines.first.chomp], args.inspect
      end
    end

    def test_postgres_reconcile
      url = PostgresServer.url
      store = Stores::Postgres.new(url)
      fences = Fences::Postgres.new(url).setup!
      name = unique_name("cli")
      store.authority(name).acquire(owner: 3, ttl: 60)
      fences.guard(name, 2**63, owner: 4) { nil }
      out, err, status = lease_machines("--store", url, "--json", "reconcile")
      assert_equal 0, status.exitstatus, err
      report = JSON.parse(out).find { |each| each.fetch("resource") == name }
      assert_equal [1, 2**63, 4, { "holder" => 3, "token" => 1 }],
                   [report.fetch("last_issued_before"), report.fetch("last_issued"), report.fetch("mark_owner"),
                    report.fetch("voided").slice("holder", "token")]
      assert_equal (2**63) + 1, store.authority(name).acquire(owner: 5, ttl: 60).lease.token
    ensure
      fences&.close
      store&.close
    end

    private

    def lease_machines(*args)
      Open3.capture3({ "LEASE_MACHINES_STORE" => nil }, RbConfig.ruby, "-I", File.join(ROOT, "lib"), EXE, *args)
    end
  end
end
