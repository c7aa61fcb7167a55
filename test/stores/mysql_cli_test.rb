# frozen_string_literal: true

require_relative "store_helper"
require_relative "../support/mysql_server"
require "lease_machines/stores/mysql"
require "lease_machines/fences/mysql"
require "json"
require "open3"
require "rbconfig"

module LeaseMachines
  # exe/lease_machines on a MySQL store, run as a subprocess the way an
  # operator runs it.
  class MySQLCLITest < Minitest::Test
    include StoreTestHelper

    ROOT = File.expand_path("../..", __dir__)
    EXE = File.join(ROOT, "exe", "lease_machines")

    def test_mysql_status_and_release
      url = MySQLServer.url
      store = Stores::MySQL.new(url)
      name = unique_name("cli")
      store.authority(name).acquire(owner: 2**63, ttl: 60)
      out, err, status = lease_machines("--store", url, "status", name)
      assert_equal 0, status.exitstatus, err
      assert_match(/^#{name}\s+9223372036854775808\s+1\s+\d+\.\d{3}s\s+1$/, out)
      store.authority(name).reacquire(owner: 2**63, ttl: 60, label: "db-2 pid 7 job=Export")
      out, err, status = lease_machines("--store", url, "status", name, "--json")
      assert_equal 0, status.exitstatus, err
      assert_equal "db-2 pid 7 job=Export", JSON.parse(out).first.fetch("label")
      _out, err, status = lease_machines("--store", url.sub("mysql2://", "mysql://"), "release", name, "--force")
      assert_equal 0, status.exitstatus, err
      assert_nil store.authority(name).checkpoint.lease
      assert_equal 2, store.authority(name).checkpoint.last_issued
    ensure
      store&.close
    end

    def test_status_reads_past_a_mysql_row_lock_and_release_gives_up_after_the_timeout
      url = MySQLServer.url
      store = Stores::MySQL.new(url)
      name = unique_name("cli_lock")
      store.authority(name).acquire(owner: 7, ttl: 60)
      locker = MySQLServer.connect
      locker.query("BEGIN")
      locker.query("SELECT * FROM lease_machines_resources WHERE name = '#{locker.escape(name)}' FOR UPDATE")
      out, err, status, seconds = timed { lease_machines("--store", url, "--timeout", "30", "status", name) }
      assert_equal 0, status.exitstatus, err
      assert_match(/^#{name}\s+7\s+1\s/, out)
      assert_operator seconds, :<, 15

      _out, err, status, seconds = timed { lease_machines("--store", url, "--timeout", "1", "release", name, "--force") }
      assert_equal 3, status.exitstatus, err
      assert_match(/timeout/, err)
      assert_operator seconds, :<, 15, "not InnoDB's 50 s lock wait"
    ensure
      locker&.close
      store&.close
    end

    def test_mysql_reconcile
      url = MySQLServer.url
      store = Stores::MySQL.new(url)
      fences = Fences::MySQL.new(url).setup!
      name = unique_name("cli")
      store.authority(name).acquire(owner: 3, ttl: 60)
      fences.guard(name, 4, owner: 9) { nil }
      out, err, status = lease_machines("--store", url, "reconcile")
      assert_equal 0, status.exitstatus, err
      assert_includes out.lines.map(&:chomp), "#{name}: raised last issued from 1 to 4, the fence's mark 4 (owner 9); " \
                                              "cleared the lease of owner 3 (token 1), which the fence refuses"
      assert_equal 5, store.authority(name).acquire(owner: 5, ttl: 60).lease.token
    ensure
      fences&.close
      store&.close
    end

    def test_a_bad_mysql_url_is_a_usage_error_and_an_unreachable_server_exit_three
      out, err, status = lease_machines("--store", "mysql2://root@127.0.0.1/app?reconnect=true", "status")
      assert_equal [2, ""], [status.exitstatus, out]
      assert_match(/bad --store: connection URL option "reconnect" is not one the MySQL store knows/, err)
      _out, err, status = lease_machines("--store", "mysql2://root@127.0.0.1:1/app?connect_timeout=1", "status")
      assert_equal 3, status.exitstatus, err
      assert_match(/MySQL/, err)
    end

    private

    def lease_machines(*args)
      Open3.capture3({ "LEASE_MACHINES_STORE" => nil }, RbConfig.ruby, "-I", File.join(ROOT, "lib"), EXE, *args)
    end
  end
end
