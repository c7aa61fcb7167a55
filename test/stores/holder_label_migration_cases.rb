# frozen_string_literal: true

module LeaseMachines
  # A table made by the schema shipped before holder labels
  # (test/stores/old_schema/<engine>.sql, the 001 file as it was) keeps
  # working, and setup! adds the label's columns without losing a lease
  # (run by StoreContract: every durable engine). An including class
  # provides `with_old_table { |open_store| ... }`: the block gets a lambda
  # that opens a new store (keywords: the store's options) on a database
  # whose table that SQL made, and whose store has never run setup!.
  module HolderLabelMigrationCases
    OLD_SCHEMA = File.join(__dir__, "old_schema")

    def old_schema_sql
      File.read(File.join(OLD_SCHEMA, "#{engine}.sql"))
    end

    def test_a_table_made_before_labels_keeps_working_unlabelled_and_setup_adds_them
      with_old_table do |open_store|
        store = open_store.call
        authority = store.authority("held-through-the-migration")
        held = authority.acquire(owner: 1, now: 100, ttl: 1_000, label: "not stored")
        assert_predicate held, :granted?, "a grant on the old table"
        assert_nil store.status(authority.name).label
        assert_equal [nil], store.statuses.map(&:label)
        assert_equal :renewed, authority.renew(owner: 1, token: held.lease.token, now: 101, ttl: 1_000).status
        # A process that opened its store before the migration.
        before = open_store.call
        before_authority = before.authority("granted-by-an-unlabelled-process")
        assert_predicate before_authority.acquire(owner: 7, now: 100, ttl: 10, label: "first"), :granted?

        2.times { assert_same store, store.setup! }

        status = store.status(authority.name)
        assert_equal held.lease.token, status.lease.token, "the lease held through the migration is kept"
        assert_equal 1, status.lease.owner
        assert_nil status.label, "unlabelled until its next grant"
        assert_equal :renewed, authority.renew(owner: 1, token: held.lease.token, now: 102, ttl: 1_000).status
        rotated = authority.reacquire(owner: 1, now: 103, ttl: 1_000, label: "now stored")
        assert_equal held.lease.token + 1, rotated.lease.token
        assert_equal "now stored", store.status(authority.name).label

        # Labelled by a store opened after the migration, then granted to
        # another owner by the store that still writes no label: the first
        # holder's words are not shown as the second's.
        after = open_store.call
        assert_predicate after.authority(before_authority.name).acquire(owner: 8, now: 200, ttl: 10, label: "eight"),
                         :granted?
        assert_equal "eight", after.status(before_authority.name).label
        assert_predicate before_authority.acquire(owner: 9, now: 300, ttl: 10, label: "nine"), :granted?
        assert_equal 9, after.status(before_authority.name).lease.owner
        assert_nil after.status(before_authority.name).label, "a grant that wrote no label shows none"
      end
    end
  end
end
