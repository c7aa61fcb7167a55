# frozen_string_literal: true

require_relative "store_helper"
require "digest"
require "json"
require "open3"
require "rbconfig"

module LeaseMachines
  # exe/lease_machines as scripts use it (issue #27): patterns, JSON, exit
  # codes, Ctrl-C, lock timeouts, Rails' sqlite3: URLs, read-only reads. Each
  # runs the executable as a subprocess.
  class CLIScriptingTest < Minitest::Test
    include StoreTestHelper

    ROOT = File.expand_path("../..", __dir__)
    EXE = File.join(ROOT, "exe", "lease_machines")
    USAGE_LINE = /\AUsage: lease_machines \[--store STORE\] .* \(see --help\)\z/

    def setup
      @dir = Dir.mktmpdir("lease_machines_cli")
      @path = File.join(@dir, "leases.sqlite3")
      @store = Stores::SQLite.new(@path).setup!
      @url = "sqlite:#{@path}"
    end

    def teardown
      @store.close
      FileUtils.rm_rf(@dir)
    end

    def test_status_match_lists_the_resources_whose_names_match_a_glob
      %w[reports:daily reports:weekly cleanup reports].each { |name| @store.authority(name).acquire(owner: 7, ttl: 60) }
      out, err, status = lease_machines("--store", @url, "status", "--match", "reports:*")
      assert_equal 0, status.exitstatus, err
      assert_equal(%w[RESOURCE reports:daily reports:weekly], out.lines.map { |line| line.split.first })

      out, err, status = lease_machines("--store", @url, "status", "--match", "*:{daily,none}", "--json")
      assert_equal 0, status.exitstatus, err
      assert_equal(["reports:daily"], JSON.parse(out).map { |entry| entry.fetch("resource") })

      out, _err, status = lease_machines("--store", @url, "status", "--match", "nothing*")
      assert_equal [0, "no resources\n"], [status.exitstatus, out]
      _out, err, status = lease_machines("--store", @url, "status", "cleanup", "--match", "c*")
      assert_equal 2, status.exitstatus
      assert_match(/RESOURCE or --match GLOB, not both/, err)
    end

    def test_json_on_every_command_prints_one_document
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      out, err, status = lease_machines("--store", @url, "release", "nightly", "--force", "--json")
      assert_equal 0, status.exitstatus, err
      report = JSON.parse(out)
      assert_equal({ "resource" => "nightly", "released" => true, "holder" => 7, "token" => 1, "last_issued" => 1 },
                   report.slice("resource", "released", "holder", "token", "last_issued"))

      out, err, status = lease_machines("--store", @url, "release", "nightly", "--force", "--json")
      assert_equal 0, status.exitstatus, err
      assert_equal({ "resource" => "nightly", "released" => false, "holder" => nil, "label" => nil, "token" => nil,
                     "expires_at_ns" => nil, "expires_in" => nil, "last_issued" => 1 }, JSON.parse(out))

      [[%w[status missing], 1], [%w[release missing --force], 1]].each do |args, code|
        out, err, status = lease_machines("--store", @url, "--json", *args)
        assert_equal code, status.exitstatus, err
        assert_equal({ "error" => "no resource named \"missing\" in this store", "exit_status" => code }, JSON.parse(out))
      end
      out, _err, status = lease_machines("--store", "sqlite:#{@dir}/nope", "--json", "status")
      assert_equal 3, status.exitstatus
      assert_match(/no SQLite database at/, JSON.parse(out).fetch("error"))
    end

    def test_exit_codes_are_documented_and_kept_for_each_command_and_outcome
      @store.authority("held").acquire(owner: 7, ttl: 60)
      missing = "sqlite:#{@dir}/missing.sqlite3"
      [
        [0, ["--store", @url, "status"]], [0, ["--store", @url, "status", "held"]],
        [0, ["--store", @url, "release", "held", "--force"]],
        [1, ["--store", @url, "status", "nope"]], [1, ["--store", @url, "release", "nope", "--force"]],
        [2, ["--store", @url, "status", "a", "b"]], [2, ["--store", @url, "release", "held"]], [2, ["frobnicate"]],
        [3, ["--store", missing, "status"]], [3, ["--store", missing, "release", "held", "--force"]],
        [3, ["--store", "postgres://nobody@127.0.0.1:1/none", "status"]],
        [3, ["--store", "postgres://nobody@127.0.0.1:1/none", "release", "held", "--force"]]
      ].each do |code, args|
        _out, err, status = lease_machines(*args)
        assert_equal code, status.exitstatus, "#{args.inspect}: #{err}"
        refute_match(/\.rb:\d+/, err, "#{args.inspect}: a message, not a backtrace")
      end
      help, = lease_machines("--help")
      ["0    done", "1    RESOURCE does not exist", "2    usage", "3    the store is unreachable",
       "130  interrupted"].each { |line| assert_includes help, line }
      docs = File.read(File.join(ROOT, "docs", "STORES.md"))
      [0, 1, 2, 3, 130].each { |code| assert_match(/^\| #{code} \|/, docs, "docs/STORES.md lists exit status #{code}") }
    end

    def test_ctrl_c_prints_one_line_and_exits_with_status_one_hundred_thirty
      path = rollback_journal_database("app.sqlite3")
      locker = SQLite3::Database.new(path)
      locker.execute("BEGIN EXCLUSIVE")
      out, err, pid = spawn_lease_machines("--store", "sqlite:#{path}", "--timeout", "60", "status")
      wait_until_open(pid, path)
      Process.kill(:INT, pid)
      _, status = Process.wait2(pid)
      message = err.read
      assert_equal 130, status.exitstatus, "#{status.inspect}: #{message}"
      assert_equal "lease_machines: interrupted\n", message
      assert_empty out.read
    ensure
      locker&.close
      [out, err].each { |io| io&.close }
    end

    def test_status_reads_past_a_write_lock_and_gives_up_on_an_exclusive_one
      path = rollback_journal_database("app.sqlite3")
      locker = SQLite3::Database.new(path)
      locker.execute("BEGIN IMMEDIATE") # a writer: readers go on
      locker.execute("INSERT INTO lease_machines_resources (name, last_issued, observed_ns, updated_at) " \
                     "VALUES ('uncommitted', '1', '0', '2026-01-01T00:00:00.000Z')")
      out, err, status, seconds = timed { lease_machines("--store", "sqlite:#{path}", "--timeout", "30", "status") }
      assert_equal [0, "no resources\n"], [status.exitstatus, out], err
      assert_operator seconds, :<, 15, "status did not wait behind the writer"

      locker.execute("COMMIT")
      locker.execute("BEGIN EXCLUSIVE") # no reader can go on: status gives up after --timeout
      _out, err, status, seconds = timed { lease_machines("--store", "sqlite:#{path}", "--timeout", "0.5", "status") }
      assert_equal 3, status.exitstatus, err
      assert_match(/locked/, err)
      assert_operator seconds, :<, 15
    ensure
      locker&.close
    end

    # doctor: the verdict of Store#durability in words (exit 0: nothing
    # acknowledged is lost; 4: the database may lose a grant), read-only.
    def test_doctor_says_what_the_database_promises
      before = Digest::SHA256.file(@path).hexdigest
      out, err, status = lease_machines("--store", @url, "doctor")
      assert_equal 0, status.exitstatus, err
      assert_match(/\ASQLite: survives_crash: an acknowledged grant is on disk/, out)
      assert_includes out.lines, "  synchronous = 2\n"
      assert_equal before, Digest::SHA256.file(@path).hexdigest, "doctor wrote nothing"

      out, err, status = lease_machines("--store", StoreTestHelper::PostgresServer.url, "doctor", "--json")
      assert_equal 4, status.exitstatus, "a server with no synchronous standby may lose a grant: #{err}"
      report = JSON.parse(out)
      assert_equal %w[PostgreSQL survives_crash], report.values_at("engine", "verdict")
      assert_equal "on", report.dig("settings", "synchronous_commit")

      _out, err, status = lease_machines("--store", @url, "doctor", "nightly")
      assert_equal [2, "lease_machines: doctor takes no RESOURCE, got 1"], [status.exitstatus, err.lines.first.chomp]
    end

    def test_status_never_waits_behind_a_postgres_row_lock_and_release_gives_up
      url = StoreTestHelper::PostgresServer.url
      store = Stores::Postgres.new(url)
      name = unique_name("cli_lock")
      store.authority(name).acquire(owner: 7, ttl: 60)
      locker = PG.connect(url)
      locker.exec("BEGIN")
      locker.exec_params("SELECT * FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      out, err, status, seconds = timed { lease_machines("--store", url, "--timeout", "30", "status", name) }
      assert_equal 0, status.exitstatus, err
      assert_match(/^#{name}\s+7\s+1\s/, out)
      assert_operator seconds, :<, 15

      _out, err, status, seconds = timed { lease_machines("--store", url, "--timeout", "1", "release", name, "--force") }
      assert_equal 3, status.exitstatus, err
      assert_match(/timeout/, err)
      assert_operator seconds, :<, 15
      locker.exec("ROLLBACK")
      locker.exec("BEGIN")
      locker.exec("LOCK TABLE lease_machines_resources IN ACCESS EXCLUSIVE MODE")
      _out, err, status, seconds = timed { lease_machines("--store", url, "--timeout", "1", "status") }
      assert_equal 3, status.exitstatus, err
      assert_operator seconds, :<, 15
    ensure
      locker&.close
      store&.close
    end

    def test_sqlite3_urls_in_rails_spelling
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      @store.close # the last connection checkpoints the WAL into the file copied below
      FileUtils.mkdir_p(File.join(@dir, "db"))
      FileUtils.cp(@path, File.join(@dir, "db", "production.sqlite3"))
      ["sqlite3:db/production.sqlite3", "sqlite3://#{@path}", "sqlite3:#{@path}", "sqlite://#{@path}"].each do |spec|
        out, err, status = lease_machines("--store", spec, "status", "nightly", chdir: @dir)
        assert_equal 0, status.exitstatus, "#{spec}: #{err}"
        assert_match(/^nightly\s+7\s+1\s/, out, spec)
      end
      _out, err, status = lease_machines("--store", "sqlite3://host/db.sqlite3", "status")
      assert_equal 2, status.exitstatus
      assert_match(/names no path/, err)
    end

    def test_a_path_that_is_not_utf8
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      @store.close
      path = File.join(@dir.b, "caf\xE9.sqlite3".b)
      File.rename(@path, path)
      [{}, { "LC_ALL" => "C", "LANG" => nil }].each do |environment|
        out, err, status = lease_machines("--store", "sqlite:#{path}", "status", env: environment)
        assert_equal 0, status.exitstatus, err
        assert_match(/^nightly\s+7\s+1\s/, out)
      end
      _out, err, status = lease_machines("--store", "sqlite:#{path}", "release", "nightly", "--force")
      assert_equal 0, status.exitstatus, err
      _out, err, status = lease_machines("--store", "sqlite:#{path}x", "status")
      assert_equal 3, status.exitstatus
      assert_includes err, "caf\\xE9.sqlite3x"
    end

    def test_usage_errors_are_short_and_abbreviations_are_refused
      @store.authority("nightly").acquire(owner: 7, ttl: 60)
      [%w[release nightly --f], %w[release nightly --forc], %w[status --js], %w[status --timeout 0], %w[status --m x],
       %w[nope], ["status", "x" * 300]].each do |args|
        out, err, status = lease_machines("--store", @url, *args)
        assert_equal 2, status.exitstatus, "#{args.inspect}: #{err}"
        assert_empty out
        lines = err.lines.map(&:chomp)
        assert_equal 2, lines.size, "#{args.inspect}: #{err}"
        assert_match(/\Alease_machines: /, lines.first)
        assert_match USAGE_LINE, lines.last
      end
      refute_nil @store.status("nightly").lease, "--f is not --force"
    end

    # A machine without the pg gem (a pg.rb ahead on the load path that
    # fails to load, as a missing gem does): one line, status 3, no backtrace.
    def test_a_missing_driver_gem_is_one_line_not_a_backtrace
      Dir.mktmpdir("no-pg") do |dir|
        File.write(File.join(dir, "pg.rb"), %(raise LoadError, "cannot load such file -- pg"\n))
        out, err, status = lease_machines("--store", "postgres://127.0.0.1:1/none", "status",
                                          env: { "RUBYOPT" => "-I#{dir}" })
        assert_equal [3, ""], [status.exitstatus, out]
        assert_equal ["lease_machines: --store \"postgres://127.0.0.1:1/none\" needs a driver gem that cannot be " \
                      "loaded here: cannot load such file -- pg\n"], err.lines
      end
    end

    def test_status_never_changes_the_database
      empty = File.join(@dir, "empty.sqlite3")
      File.write(empty, "")
      out, err, status = lease_machines("--store", "sqlite:#{empty}", "status")
      assert_equal [3, ""], [status.exitstatus, out]
      assert_match(/empty file/, err)
      assert_equal 0, File.size(empty)
      assert_equal ["empty.sqlite3", "leases.sqlite3"], Dir.children(@dir).grep(/\Aempty|\Aleases.sqlite3\z/).sort

      app = rollback_journal_database("app.sqlite3")
      before = Digest::SHA256.file(app).hexdigest
      out, err, status = lease_machines("--store", "sqlite:#{app}", "status")
      assert_equal [0, "no resources\n"], [status.exitstatus, out], err
      assert_equal before, Digest::SHA256.file(app).hexdigest
      refute File.exist?("#{app}-wal"), "status switched the app's database to WAL"
      db = SQLite3::Database.new(app)
      assert_equal "delete", db.get_first_value("PRAGMA journal_mode")
    ensure
      db&.close
    end

    private

    # A database in SQLite's default (rollback journal) mode, with the table:
    # an application's database that the store shares.
    def rollback_journal_database(name)
      path = File.join(@dir, name)
      db = SQLite3::Database.new(path)
      db.execute_batch(Stores::SQLite.schema_sql)
      path
    ensure
      db&.close
    end

    # Waits until the process has `path` open (it is then past loading the gem).
    def wait_until_open(pid, path)
      Timeout.timeout(60) do
        until Dir.glob("/proc/#{pid}/fd/*").any? { |fd| (File.readlink(fd) rescue nil) == path } # rubocop:disable Style/RescueModifier
          sleep 0.05
        end
      end
    end

    def command(args)
      [{ "LEASE_MACHINES_STORE" => nil }, RbConfig.ruby, "-I", File.join(ROOT, "lib"), EXE, *args]
    end

    def spawn_lease_machines(*args)
      out_r, out_w = IO.pipe
      err_r, err_w = IO.pipe
      pid = Process.spawn(*command(args), out: out_w, err: err_w)
      [out_w, err_w].each(&:close)
      [out_r, err_r, pid]
    end

    def lease_machines(*args, env: {}, chdir: ROOT)
      environment, *rest = command(args)
      Open3.capture3(environment.merge(env), *rest, chdir: chdir)
    end
  end
end
