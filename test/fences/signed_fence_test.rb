# frozen_string_literal: true

require_relative "signed_fence_cases"
require "tempfile"

module LeaseMachines
  # The lease store in SQLite, the data and its fence in PostgreSQL.
  class SignedPostgresFenceTest < Minitest::Test
    include SignedFenceCases
    include FenceTestHelper::PostgresData

    def setup
      super
      @store_dir = Dir.mktmpdir("lease_machines_signed_store")
    end

    def teardown
      super
      FileUtils.remove_entry(@store_dir)
    end

    def store(**options)
      Stores::SQLite.new(File.join(@store_dir, "leases.sqlite3"), **options).tap(&:setup!)
    end

    def new_fences(**options) = Fences::Postgres.new(@url, **options)

    def write(conn, name, body) = driver_write(conn, name, body)

    def test_a_refused_proof_sends_nothing_to_the_database
      name = unique_name
      lease = grant(name)
      conn = pg_connection
      fences = Fences::Postgres.new(conn, signing_keys: [KEY])
      trace = Tempfile.create("lease_machines_trace")
      conn.trace(trace)
      assert_raises(ForgedTokenError) { fences.guard(name, lease.token, proof: "0" * 64, owner: lease.owner) { flunk "ran" } }
      assert_raises(ForgedTokenError) { fences.guard(name, lease.token) { flunk "ran" } }
      conn.untrace
      assert_equal 0, File.size(trace.path), "no message reached the server"
      fences.guard(name, lease) { |c| write(c, name, "then the holder") }
      assert_equal "then the holder", committed_body(name)
    ensure
      trace&.close
      File.unlink(trace.path) if trace
    end

    def test_a_signed_fence_bound_to_its_store_checks_both
      name = unique_name
      signing = Stores::Postgres.new(@url, signing_keys: [KEY]).tap(&:setup!)
      lease = signing.authority(name).acquire(owner: 7, ttl: 30).lease
      both = opened(Fences::Postgres.new(@url, store: true, signing_keys: [KEY]))

      both.guard(name, lease) { |conn| write(conn, name, "signed and issued") }
      assert_forged(both, name, lease.token, :missing)
      # A proof made with the key for a token the store never issued: the
      # bound check refuses what the signature alone would let through.
      forged_by_a_key_holder = Signing::Keys.from([KEY]).sign(name, lease.token + 1, lease.owner)
      error = assert_raises(UnknownTokenError) do
        both.guard(name, lease.token + 1, proof: forged_by_a_key_holder, owner: lease.owner) { flunk "ran" }
      end
      refute_kind_of ForgedTokenError, error
      assert_equal "signed and issued", committed_body(name)
    ensure
      signing&.close
    end
  end

  # The lease store in PostgreSQL, the data and its fence in SQLite.
  class SignedSQLiteFenceTest < Minitest::Test
    include SignedFenceCases
    include FenceTestHelper::SQLiteData

    def store(**options)
      Stores::Postgres.new(StoreTestHelper::PostgresServer.url, **options).tap(&:setup!)
    end

    def new_fences(**options) = Fences::SQLite.new(@path, **options)

    def write(conn, name, body) = driver_write(conn, name, body)
  end
end
