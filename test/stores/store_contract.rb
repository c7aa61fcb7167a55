# frozen_string_literal: true

require_relative "store_helper"
require_relative "holder_label_cases"
require_relative "holder_label_migration_cases"
require_relative "batch_renewal_cases"

module LeaseMachines
  # The behaviour every store engine must show, run against the real engine
  # (nothing mocked). An including test class provides:
  #
  # - `new_store(**options)`: a new store object on the test database;
  # - `raw_row(name)`: the stored columns as the database holds them
  #   (Hash of column name => String or nil);
  # - `insert_row(name, **columns)`: writes a row directly (Integers);
  # - `create_log_table`, `log_hook(owner)`, `read_log(name)`: a log written by
  #   a before_commit hook in the decision's own transaction, in commit order;
  # - `engine_connection_class`: the raw connection class a hook receives;
  # - `insert_unchecked(name, columns)`, `raw_columns(name)`, `delete_row(name)`,
  #   `engine_bad_rows`: rows past the schema's own checks, as a hand edit
  #   might write them (five decimal Strings or nil);
  # - `raw_label(name)`, `write_raw_label(name, label)`: the holder label's
  #   column as stored, and a hand edit of it (HolderLabelCases);
  # - `with_old_table`: a table made by the schema before labels
  #   (HolderLabelMigrationCases).
  #
  # The contract comes in two parts: StoreContractInProcess, what a store
  # shows within one process (every store, Stores::Memory included), and
  # StoreContract, everything (that part, and what needs several processes or
  # a schema: every durable engine).
  module StoreContractInProcess
    include StoreTestHelper
    include HolderLabelCases
    include BatchRenewalCases

    U64_COLUMNS = %w[last_issued lease_owner lease_token lease_expires_at_ns observed_ns].freeze

    # --- the decisions ----------------------------------------------------

    # Every engine says what its database promises about an acknowledged
    # grant, in one of the verdicts (the rules: durability_test.rb).
    def test_durability_is_read_from_the_engine
      durability = new_store.durability

      assert_kind_of Stores::Durability, durability
      assert_includes Stores::Durability::VERDICTS.keys, durability.verdict
      assert_equal durability.meaning, Stores::Durability::VERDICTS.fetch(durability.verdict)
    end

    # durability: :strict decides only where Durability#strict? holds, and
    # otherwise refuses before writing anything, naming the verdict.
    def test_strict_durability_decides_only_on_a_database_that_keeps_acknowledged_grants
      name = unique_name("strict")
      store = new_store(durability: :strict)
      if store.durability.strict?
        assert_predicate store.authority(name).acquire(owner: 1, ttl: 10), :granted?
      else
        error = assert_raises(StoreError) { store.authority(name).acquire(owner: 1, ttl: 10) }
        assert_match(/durability: :strict refuses to decide: #{store.durability.verdict}, .*nothing was written/,
                     error.message)
        assert_nil store.status(name), "nothing was written"
      end
      assert_includes store.inspect, " durability=strict"
      error = assert_raises(ArgumentError) { new_store(durability: :lax) }
      assert_equal "durability must be :strict or nil, got :lax", error.message
    end

    def test_acquire_renew_release_with_caller_time
      authority = new_store.authority(unique_name)
      granted = authority.acquire(owner: 1, now: 100, ttl: 10)
      assert_equal Decision.new(status: :granted, lease: Lease.new(owner: 1, token: 1, expires_at: 110)), granted

      renewed = authority.renew(owner: 1, token: 1, now: 105, ttl: 10)
      assert_equal Lease.new(owner: 1, token: 1, expires_at: 115), renewed.lease
      assert_predicate renewed, :renewed?

      assert_equal Decision.rejected(:occupied), authority.acquire(owner: 2, now: 106, ttl: 1)
      assert_same Decision::RELEASED, authority.release(owner: 1, token: 1, now: 107)

      again = authority.acquire(owner: 1, now: 108, ttl: 1)
      assert_equal 2, again.lease.token, "the high-water mark survives the release"
      assert_equal Checkpoint.from_parts(last_issued: 2, lease: again.lease, observed: 108), authority.checkpoint
    end

    def test_reacquire_rotates_the_token_and_fences_the_old_one
      authority = new_store.authority(unique_name)
      first = authority.acquire(owner: 5, now: 10, ttl: 10).lease
      second = authority.reacquire(owner: 5, now: 11, ttl: 10).lease
      assert_equal [1, 2], [first.token, second.token]
      assert_equal Decision.rejected(:stale_token), authority.renew(owner: 5, token: 1, now: 12, ttl: 10)
      assert_equal Decision.rejected(:occupied), authority.reacquire(owner: 6, now: 12, ttl: 10)
    end

    # With a clock that never steps back, the store decides exactly as one
    # in-memory authority over the whole history (its committed instant may
    # lag: refusals within a lease write nothing).
    def test_decisions_match_the_in_memory_authority_step_by_step
      rng = Random.new(6)
      durable = new_store.authority(unique_name("differential"))
      memory = Authority.new(clock_policy: :clamp)
      tokens = [0, 1]
      now = 1_000.0
      120.times do |step|
        now += [0.0, 0.001, 0.25, 0.5, 1.0, 2.0].sample(random: rng)
        operation, arguments = random_call(rng, [0, 1, 2, U64_MAX].sample(random: rng), tokens.sample(random: rng))
        expected = memory.public_send(operation, now: now, **arguments)
        assert_equal expected, durable.public_send(operation, now: now, **arguments),
                     "step #{step}: #{operation}(#{arguments}) at #{now}"
        tokens << expected.lease.token if expected.lease
      end
      assert_equal [memory.checkpoint.last_issued, memory.checkpoint.lease],
                   [durable.checkpoint.last_issued, durable.checkpoint.lease]
    end

    # With clocks stepping back too: each decision is the core's on the
    # committed row, and the row written is the core's (or none).
    def test_decisions_match_the_core_on_the_committed_row_step_by_step
      rng = Random.new(7)
      durable = new_store.authority(unique_name("differential-back"))
      tokens = [0, 1]
      now = 1_000.0
      120.times do |step|
        now = [now + [-3.0, -0.5, 0.001, 0.25, 0.5, 1.0, 2.0].sample(random: rng), 0.0].max
        operation, arguments = random_call(rng, [0, 1, 2, U64_MAX].sample(random: rng), tokens.sample(random: rng))
        before = durable.checkpoint
        memory = Authority.restore(before, clock_policy: :clamp)
        expected = memory.public_send(operation, now: now, **arguments)
        assert_equal expected, durable.public_send(operation, now: now, **arguments),
                     "step #{step}: #{operation}(#{arguments}) at #{now}"
        assert_includes [before, memory.checkpoint], durable.checkpoint, "step #{step}"
        tokens << expected.lease.token if expected.lease
      end
    end

    def test_the_store_clock_is_used_when_now_is_not_given
      authority = new_store.authority(unique_name)
      before = realtime_ns
      decision = authority.acquire(owner: 3, ttl: 2.5)
      after = realtime_ns
      checkpoint = authority.checkpoint
      observed = checkpoint.observed_ns
      assert_equal 0, observed % Stores::NANOS_PER_MILLISECOND, "the store clock ticks in whole milliseconds"
      slack = 2 * Stores::NANOS_PER_SECOND
      assert_operator observed, :>=, before - slack
      assert_operator observed, :<=, after + slack
      assert_equal observed + 2_500_000_000, decision.lease.expires_at_ns, "expires_at is exactly now + ttl"
      assert_equal decision.lease, checkpoint.lease
      assert_in_delta Time.now.to_f + 2.5, decision.lease.expires_at, 3.0
    end

    def test_ttl_is_required_and_now_is_optional
      authority = new_store.authority(unique_name)
      assert_raises(ArgumentError) { authority.acquire(owner: 1) }
      assert_raises(ArgumentError) { authority.renew(owner: 1, token: 1) }
      assert_raises(ArgumentError) { authority.acquire(owner: 1, ttl: 1, when: 3) }
      assert_predicate authority.acquire(owner: 1, ttl: 60), :granted?
      assert_predicate authority.release(owner: 1, token: 1), :released?
    end

    def test_a_rejection_is_committed_only_when_it_sees_the_lease_expire
      name = unique_name
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 100, ttl: 10)
      assert_equal Decision.rejected(:occupied), authority.acquire(owner: 2, now: 105, ttl: 1)
      assert_equal 100.0, new_store.authority(name).checkpoint.observed, "a refusal within the lease writes nothing"

      # A caller whose clock is behind is evaluated at the committed clock (clamp).
      renewed = authority.renew(owner: 1, token: 1, now: 103, ttl: 1)
      assert_equal 110.0, renewed.lease.expires_at, "renewal never shortens"

      # Once a later instant was committed, a clock stepping back revives nothing.
      assert_equal Decision.rejected(:stale_token), authority.renew(owner: 2, token: 9, now: 111, ttl: 1)
      assert_equal Decision.rejected(:expired), authority.renew(owner: 1, token: 1, now: 109, ttl: 5)
      assert_equal 111.0, authority.checkpoint.observed
    end

    def test_invalid_ttl_is_a_decision_and_with_no_lease_writes_nothing
      store = new_store
      authority = store.authority(unique_name)
      assert_equal Decision.rejected(:invalid_ttl), authority.acquire(owner: 1, now: 7, ttl: 0)
      assert_equal Checkpoint.from_parts(last_issued: nil, lease: nil, observed: 0), authority.checkpoint
      assert_nil store.status(authority.name), "no row"
    end

    # --- tokens: :clock_floor (docs/STORES.md, "Durability and failover") ---

    # On every path that grants (a hook takes the locked transaction; without
    # one a server engine's fast path, SQLite's read before the write lock) a
    # token is at least the store clock in microseconds, and still strictly
    # greater than the last.
    def test_clock_floor_tokens_are_at_least_the_store_clock_in_microseconds
      [new_store(tokens: :clock_floor), new_store(tokens: :clock_floor, before_commit: ->(_commit) {})].each do |store|
        authority = store.authority(unique_name)
        tokens = Array.new(3) do |index|
          token = authority.reacquire(owner: 1, ttl: 30).lease.token
          clock_us = authority.checkpoint.observed_ns / 1000
          assert_operator token, :>=, clock_us
          assert_equal clock_us, token, "a fresh history starts at the clock" if index.zero?
          token
        end
        assert_equal tokens.uniq.sort, tokens, "strictly increasing"
      end
    end

    # The floor is the instant the request is evaluated at: a caller's `now:`,
    # or the committed clock when the caller's is behind it (clamp).
    def test_clock_floor_follows_the_evaluated_instant
      authority = new_store(tokens: :clock_floor).authority(unique_name)
      assert_equal 100_000_000, authority.acquire(owner: 1, now: 100, ttl: 10).lease.token
      assert_equal 100_000_001, authority.reacquire(owner: 1, now: 100, ttl: 10).lease.token, "within one µs: + 1"
      assert_equal 100_000_002, authority.reacquire(owner: 1, now: 50, ttl: 10).lease.token, "evaluated at 100 s"
      assert_equal 100_500_000, authority.reacquire(owner: 1, now: 100.5, ttl: 10).lease.token
    end

    def test_clock_floor_moves_an_existing_history_forward_once_and_never_back
      name = unique_name
      sequence = new_store.authority(name)
      floor = new_store(tokens: :clock_floor).authority(name)
      tokens = [100, 101].map { |now| sequence.reacquire(owner: 1, now: now, ttl: 10).lease.token }
      assert_equal [1, 2], tokens
      assert_equal 102_000_000, floor.reacquire(owner: 1, now: 102, ttl: 10).lease.token, "up to the clock, once"
      assert_equal 102_000_001, sequence.reacquire(owner: 1, now: 103, ttl: 10).lease.token, "never back"
      assert_equal 104_000_000, floor.reacquire(owner: 1, now: 104, ttl: 10).lease.token
    end

    def test_clock_floor_above_the_clock_goes_on_by_one_and_fails_closed_at_the_top
      name = unique_name
      insert_row(name, last_issued: U64_MAX - 1, observed_ns: 5)
      floor = new_store(tokens: :clock_floor).authority(name)
      assert_equal U64_MAX, floor.acquire(owner: 1, ttl: 10).lease.token
      assert_equal Decision.rejected(:tokens_exhausted), floor.reacquire(owner: 1, ttl: 10)
      assert_equal U64_MAX, floor.checkpoint.last_issued
    end

    def test_the_tokens_option_is_checked_at_construction
      assert_equal :sequence, new_store.tokens
      assert_equal :clock_floor, new_store(tokens: :clock_floor).tokens
      [:fast, :"clock_floor\x00", "clock_floor", nil, 1].each do |bad|
        error = assert_raises(ArgumentError) { new_store(tokens: bad) }
        assert_equal "tokens must be :sequence or :clock_floor, got #{bad.inspect}", error.message
      end
    end

    # --- one history per resource -------------------------------------------

    def test_every_authority_and_store_for_a_name_shares_one_history
      name = unique_name
      store = new_store
      first = store.authority(name)
      second = store.authority(name)
      other_store = new_store.authority(name)

      assert_equal 1, first.acquire(owner: 1, now: 10, ttl: 10).lease.token
      assert_equal Decision.rejected(:occupied), second.acquire(owner: 2, now: 11, ttl: 10)
      assert_predicate other_store.release(owner: 1, token: 1, now: 12), :released?
      assert_equal 2, second.acquire(owner: 2, now: 13, ttl: 10).lease.token
      assert_equal first.checkpoint, other_store.checkpoint
      copy = store.authority(name.dup)
      assert_equal name, copy.name
      assert_predicate copy.name, :frozen?
    end

    def test_threads_share_one_store_object
      store = new_store
      name = unique_name("threads")
      threads = Array.new(4) do |index|
        Thread.new do
          Array.new(10) { store.authority(name).reacquire(owner: index, now: 60, ttl: 1) }
        end
      end
      decisions = threads.flat_map(&:value)
      tokens = decisions.select(&:granted?).map { |decision| decision.lease.token }
      assert_equal tokens.uniq, tokens
      assert_equal store.authority(name).checkpoint.last_issued, tokens.max
      assert_operator tokens.size, :>=, 10
    end

    # An interrupt that skips `rescue` (Thread#kill, Ruby 3.1's Timeout, which
    # unwinds by throw) during a slow hook still leaves no transaction open:
    # the next call on the same store works, and another connection takes the
    # row at once (the interrupted decision was not committed).
    def test_a_timeout_during_the_hook_leaves_no_transaction_open
      assert_interrupted_decision_cleaned_up do |store, name, entered|
        assert_raises(Timeout::Error) do
          Timeout.timeout(0.3) { store.authority(name).acquire(owner: 1, ttl: 30) }
        end
        refute_empty entered
      end
    end

    def test_a_thread_killed_during_the_hook_leaves_no_transaction_open
      assert_interrupted_decision_cleaned_up do |store, name, entered|
        caller = Thread.new { store.authority(name).acquire(owner: 1, ttl: 30) }
        entered.pop
        caller.kill
        assert_nil caller.join(10)&.value, "the killed call returns nothing"
      end
    end

    def test_resources_are_independent
      store = new_store
      one = store.authority(unique_name)
      two = store.authority(unique_name)
      assert_equal 1, one.acquire(owner: 1, now: 1, ttl: 1).lease.token
      assert_equal 1, two.acquire(owner: 1, now: 1, ttl: 1).lease.token
      assert_equal 2, one.reacquire(owner: 1, now: 1.5, ttl: 1).lease.token
      assert_equal 1, two.checkpoint.last_issued
    end

    def test_a_resource_nobody_used_reads_as_an_empty_history_and_writes_nothing
      store = new_store
      name = unique_name
      assert_equal Checkpoint.from_parts(last_issued: nil, lease: nil, observed: 0), store.authority(name).checkpoint
      assert_nil store.status(name)
      assert_nil store.force_release(name)
      assert_nil store.status(name)
    end

    # --- encoding: the whole u64 range, exactly ------------------------------

    def test_owner_extremes_round_trip
      store = new_store
      EXTREMES.each do |owner|
        name = unique_name("owner")
        lease = store.authority(name).acquire(owner: owner, now: 20, ttl: 1).lease
        assert_equal owner, lease.owner
        assert_equal owner.to_s, raw_row(name).fetch("lease_owner"), "owner #{owner} is stored as its decimal"
        assert_equal lease, new_store.authority(name).checkpoint.lease
        assert_predicate store.authority(name).renew(owner: owner, token: 1, now: 20.5, ttl: 1), :renewed?
      end
    end

    def test_token_extremes_round_trip
      store = new_store
      EXTREMES.drop(1).each do |token|
        name = unique_name("token")
        insert_row(name, last_issued: token - 1) if token > 1
        authority = store.authority(name)
        lease = authority.acquire(owner: 9, now: 30, ttl: 1).lease
        assert_equal token, lease.token
        assert_equal [token.to_s, token.to_s], raw_row(name).values_at("last_issued", "lease_token")
        assert_equal lease, new_store.authority(name).checkpoint.lease
        assert_predicate authority.renew(owner: 9, token: token, now: 30.5, ttl: 1), :renewed?
        assert_predicate authority.release(owner: 9, token: token, now: 30.6), :released?
        assert_equal token.to_s, raw_row(name).fetch("last_issued"), "the high-water mark stays after release"
        next_grant = authority.acquire(owner: 9, now: 31, ttl: 1)
        expected = token == U64_MAX ? Decision.rejected(:tokens_exhausted) : token + 1
        assert_equal expected, next_grant.lease ? next_grant.lease.token : next_grant
      end
    end

    def test_token_zero_is_stale_and_a_stored_extreme_lease_restores
      name = unique_name
      insert_row(name, last_issued: U64_MAX, owner: U64_MAX, token: U64_MAX, expires_at_ns: U64_MAX,
                       observed_ns: U64_MAX - 1)
      authority = new_store.authority(name)
      lease = Lease.exact(owner: U64_MAX, token: U64_MAX, expires_at_ns: U64_MAX)
      assert_equal Checkpoint.exact(last_issued: U64_MAX, lease: lease, observed_ns: U64_MAX - 1), authority.checkpoint
      assert_equal Decision.rejected(:stale_token), authority.renew(owner: U64_MAX, token: 0, ttl: 1)
      assert_equal Decision.rejected(:deadline_overflow), authority.acquire(owner: 1, ttl: 1), "checked before occupied"
      assert_equal Decision.rejected(:occupied), authority.acquire(owner: 1, ttl: 1e-9)
      assert_equal Decision.rejected(:deadline_overflow), authority.renew(owner: U64_MAX, token: U64_MAX, ttl: 1)
    end

    def test_instants_round_trip_to_the_nanosecond_up_to_the_end_of_the_timeline
      authority = new_store.authority(unique_name)
      last_second = U64_MAX / Stores::NANOS_PER_SECOND # 18446744073 s, in 2554
      lease = authority.acquire(owner: 1, now: last_second, ttl: 0.709551615).lease
      assert_equal U64_MAX, lease.expires_at_ns
      assert_equal U64_MAX.to_s, raw_row(authority.name).fetch("lease_expires_at_ns")
      assert_equal lease, authority.checkpoint.lease

      other = new_store.authority(unique_name)
      assert_equal Decision.rejected(:deadline_overflow), other.acquire(owner: 1, now: last_second, ttl: 0.709551616)
      assert_equal 0, other.checkpoint.observed_ns, "a refusal with no lease writes nothing"

      fine = new_store.authority(unique_name).acquire(owner: 1, now: 1.000000001, ttl: 0.000000002).lease
      assert_equal 1_000_000_003, fine.expires_at_ns
    end

    # --- arguments ------------------------------------------------------------

    def test_malformed_arguments_raise_before_any_transaction
      store = new_store
      name = unique_name
      authority = store.authority(name)
      assert_raise_message(RangeError, "owner must be an Integer in 0..18446744073709551615, got -1") do
        authority.acquire(owner: -1, ttl: 1)
      end
      assert_raise_message(TypeError, /\Aowner must be an Integer .*, got 1\.0 \(Float\)\z/) do
        authority.acquire(owner: 1.0, ttl: 1)
      end
      assert_raise_message(TypeError, /\Atoken must be an Integer .*, got nil/) do
        authority.renew(owner: 1, token: nil, ttl: 1)
      end
      assert_raise_message(ArgumentError, /\Anow must be a finite, non-negative number of seconds, got -1\z/) do
        authority.acquire(owner: 1, now: -1, ttl: 1)
      end
      assert_raise_message(TypeError, /\Attl must be an Integer or Float \(seconds\), got "1"/) do
        authority.acquire(owner: 1, ttl: "1")
      end
      assert_raise_message(ArgumentError, /\Attl is too large for a store .*got 18446744074\z/) do
        authority.acquire(owner: 1, now: 0, ttl: 18_446_744_074)
      end
      assert_raise_message(ArgumentError, /\Anow is too large for a store .*got 18446744074\z/) do
        authority.release(owner: 1, token: 1, now: 18_446_744_074)
      end
      assert_raise_message(ArgumentError, /\Anow is too large to represent .*got 1\.0e\+20\z/) do
        authority.release(owner: 1, token: 1, now: 1e20)
      end
      assert_nil store.status(name), "no malformed call wrote a row"
    end

    def test_resource_names_are_validated
      store = new_store
      assert_raise_message(TypeError, "name must be a String (the resource name), got nil (NilClass)") do
        store.authority(nil)
      end
      assert_raise_message(TypeError, "name must be a String (the resource name), got :report (Symbol)") do
        store.authority(:report)
      end
      assert_raise_message(ArgumentError, 'name must not be empty, got ""') { store.authority("") }
      assert_raise_message(ArgumentError, /\Aname must be at most 255 bytes, got 256 bytes: "aaa/) do
        store.authority("a" * 256)
      end
      assert_raise_message(ArgumentError, /\Aname must be at most 255 bytes, got 256 bytes/) do
        store.authority("é" * 128)
      end
      assert_raise_message(ArgumentError, 'name must not contain NUL bytes, got "a\\u0000b"') do
        store.authority("a\0b")
      end
      assert_raise_message(ArgumentError, /\Aname must be valid UTF-8/) { store.authority("\xFF") }
      assert_raise_message(ArgumentError, /\Aname must be valid UTF-8/) { store.authority("\xFF".b) }
      assert_raises(TypeError) { store.status(42) }
      assert_raises(ArgumentError) { store.force_release("") }

      long = "#{'é' * 127}x" # 255 bytes
      unicode = store.authority(long)
      assert_predicate unicode.acquire(owner: 1, now: 1, ttl: 1), :granted?
      assert_equal long, store.status(long).name
      ascii_binary = store.authority("plain".b)
      assert_equal Encoding::UTF_8, ascii_binary.name.encoding
    end

    def test_the_store_validates_its_options
      assert_raises(TypeError) { new_store(before_commit: 42) }
    end

    # --- the hook, errors and operators --------------------------------------

    def test_before_commit_sees_the_decision_inside_the_transaction
      seen = []
      store = new_store(before_commit: ->(commit) { seen << commit })
      name = unique_name
      decision = store.authority(name).acquire(owner: 4, now: 40, ttl: 4)
      assert_equal 1, seen.size
      commit = seen.first
      assert_same store, commit.store
      assert_equal name, commit.name
      assert_same decision, commit.decision
      assert_equal store.authority(name).checkpoint, commit.checkpoint
      assert_kind_of engine_connection_class, commit.connection
    end

    def test_an_error_before_commit_rolls_back_and_reaches_the_caller
      name = unique_name
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 10, ttl: 1)
      before = authority.checkpoint
      failing = new_store(before_commit: ->(_commit) { raise IOError, "hook failed" }).authority(name)
      error = assert_raises(IOError) { failing.reacquire(owner: 1, now: 10.5, ttl: 1) }
      assert_equal "hook failed", error.message
      assert_equal before, authority.checkpoint
      assert_equal 2, authority.reacquire(owner: 1, now: 10.5, ttl: 1).lease.token
    end

    def test_status_reports_every_resource
      store = new_store
      held = unique_name("a-held")
      authority = store.authority(held)
      authority.acquire(owner: 11, ttl: 60)
      status = store.status(held)
      assert_equal held, status.name
      assert_equal 1, status.last_issued
      assert_equal 11, status.lease.owner
      assert_predicate status, :held?
      assert_in_delta 60.0, status.expires_in, 5.0
      assert_kind_of Time, status.updated_at
      assert_in_delta Time.now.to_f, status.updated_at.to_f, 5.0
      assert_equal authority.checkpoint, status.checkpoint
      assert_predicate status, :frozen?

      old = unique_name("b-old")
      store.authority(old).acquire(owner: 12, now: 1, ttl: 1)
      assert_operator store.status(old).expires_in, :<, 0
      refute_predicate store.status(old), :held?

      names = store.statuses.map(&:name)
      assert_includes names, held
      assert_includes names, old
      assert_equal names.sort, names
    end

    # What a page of a list reads: every name, in #statuses' order, then the
    # statuses of the page's names alone (a name without a row left out).
    # Names with quotes, commas and braces reach the query as names.
    def test_names_and_the_statuses_of_some_names
      store = new_store
      names = %w[c a b].map { |tag| unique_name(%(page "#{tag}", {x} ü)) }
      names.each { |name| store.authority(name).acquire(owner: 7, ttl: 60) }
      listed = store.names
      assert_equal store.statuses.map(&:name), listed
      names.each { |name| assert_includes listed, name }

      some = store.statuses([names[0], unique_name("page-none"), names[1], names[0]])
      assert_equal [names[1], names[0]], some.map(&:name), "ordered by name, each once"
      assert_equal [store.status(names[1]).checkpoint, store.status(names[0]).checkpoint], some.map(&:checkpoint)
      assert_equal [], store.statuses([])
      assert_raises(TypeError) { store.statuses(names[0]) }
      error = assert_raises(TypeError) { store.statuses([names[0], :b]) }
      assert_includes error.message, "names must be an Array of Strings"
    end

    def test_force_release_clears_the_lease_and_keeps_the_high_water_mark
      store = new_store
      name = unique_name
      authority = store.authority(name)
      lease = authority.acquire(owner: 7, ttl: 60).lease
      before = store.force_release(name)
      assert_equal lease, before.lease
      assert_equal 1, before.last_issued
      checkpoint = authority.checkpoint
      assert_nil checkpoint.lease
      assert_equal 1, checkpoint.last_issued
      assert_equal Decision.rejected(:stale_token), authority.renew(owner: 7, token: 1, ttl: 60)
      assert_equal 2, authority.acquire(owner: 7, ttl: 60).lease.token
      store.force_release(name)
      assert_nil store.force_release(name).lease, "a second release finds nothing to clear"
      assert_equal 2, authority.checkpoint.last_issued
    end

    # Rows no history can produce: every call refuses them with a StoreError
    # naming the resource, and the row stays as it is.
    BAD_ROWS = {
      "a lease whose token was never issued" => %w[1 5 2 10 0],
      "a lease without a high-water mark" => [nil, "5", "1", "10", "0"],
      "half a lease record" => ["3", "5", nil, "10", "0"],
      "a negative instant" => ["1", nil, nil, nil, "-1"],
      "a token beyond 2**64-1" => [(2**64).to_s, "5", (2**64).to_s, "10", "0"],
      "token 0" => %w[1 5 0 10 0]
    }.freeze

    def test_a_bad_row_is_refused_and_left_alone
      store = new_store
      names = []
      BAD_ROWS.merge(engine_bad_rows).each do |label, columns|
        name = unique_name("bad")
        names << name
        insert_unchecked(name, columns)
        before = raw_columns(name)
        authority = store.authority(name)
        [-> { authority.acquire(owner: 1, ttl: 1) }, -> { authority.renew(owner: 5, token: 1, ttl: 1) },
         -> { authority.release(owner: 5, token: 1) }, -> { store.status(name) }].each do |call|
          error = assert_raises(StoreError, label) { call.call }
          assert_includes error.message, name.inspect, label
        end
        assert_equal before, raw_columns(name), "#{label}: the row is left as it is"
      end
    ensure
      # Other tests list every resource, and Store#statuses refuses a bad row too.
      names&.each { |name| delete_row(name) }
    end

    # One bad row does not hide the others: statuses raises
    # UnreadableStatusesError, which carries every readable status and the
    # error of each unreadable row.
    def test_statuses_with_a_bad_row_lists_the_readable_ones
      store = new_store
      good = [unique_name("a-good"), unique_name("c-good")]
      good.each { |name| store.authority(name).acquire(owner: 7, ttl: 60) }
      bad = unique_name("b-bad")
      insert_unchecked(bad, BAD_ROWS.fetch("half a lease record"))
      error = assert_raises(Stores::UnreadableStatusesError) { store.statuses }
      assert_kind_of StoreError, error
      listed = error.statuses.map(&:name)
      good.each { |name| assert_includes listed, name }
      refute_includes listed, bad
      assert_equal [bad], error.failures.keys
      assert_includes error.failures.fetch(bad).message, bad.inspect
      page = assert_raises(Stores::UnreadableStatusesError) { store.statuses([bad, good.last]) }
      assert_equal [good.last], page.statuses.map(&:name)
      assert_equal [bad], page.failures.keys
    ensure
      delete_row(bad) if bad
    end

    private

    # Runs a decision with a slow hook, lets the block interrupt it, then
    # checks that nothing stayed locked or open.
    def assert_interrupted_decision_cleaned_up
      name = unique_name("interrupted")
      entered = Queue.new
      slow = true
      store = new_store(before_commit: lambda do |_commit|
        next unless slow

        entered << true
        sleep 5
      end)
      yield store, name, entered
      slow = false
      other = new_store
      started = monotonic
      taken = Thread.new { other.authority(name).acquire(owner: 2, ttl: 30) }
      assert taken.join(10), "another connection takes the row"
      assert_predicate taken.value, :granted?, "the interrupted decision was not committed"
      assert_operator monotonic - started, :<, 2, "the row was not locked"
      assert_equal Decision.rejected(:occupied), store.authority(name).acquire(owner: 1, ttl: 30),
                   "the interrupted store's next call works"
      assert_predicate store.authority(unique_name).acquire(owner: 1, ttl: 30), :granted?
      store.force_release(name)
    ensure
      slow = false
    end

    def random_call(rng, owner, token)
      ttl = [0, 0.5, 1, 2.5, 3].sample(random: rng)
      case %i[acquire reacquire renew release].sample(random: rng)
      when :acquire then [:acquire, { owner: owner, ttl: ttl }]
      when :reacquire then [:reacquire, { owner: owner, ttl: ttl }]
      when :renew then [:renew, { owner: owner, token: token, ttl: ttl }]
      else [:release, { owner: owner, token: token }]
      end
    end

    def assert_raise_message(klass, message, &)
      error = assert_raises(klass, &)
      assert_equal klass, error.class
      message.is_a?(Regexp) ? assert_match(message, error.message) : assert_equal(message, error.message)
      error
    end
  end

  # What a durable engine shows beyond one process: forked children, killed
  # processes, contention between processes, and its schema.
  module StoreContract
    include StoreContractInProcess
    include HolderLabelMigrationCases

    # A connection opened before fork belongs to the parent: the child opens
    # its own, and the parent's still works afterwards.
    def test_a_store_used_before_fork_opens_its_own_connection_in_the_child
      name = unique_name
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      pid = fork_child { raise "child saw no lease" unless authority.reacquire(owner: 1, now: 2, ttl: 1).granted? }
      assert_child_succeeded(pid)
      assert_equal 3, authority.reacquire(owner: 1, now: 3, ttl: 1).lease.token, "the parent's connection still works"
    end

    # Closing the store in a child closes only what the child opened: the
    # parent's connection is neither closed there nor left for the child's
    # garbage collector to finalize (which would end the parent's session).
    def test_closing_a_store_in_a_forked_child_leaves_the_parents_connection_alone
      store = new_store
      authority = store.authority(unique_name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      pid = fork_child do
        store.close
        GC.start
      end
      assert_child_succeeded(pid)
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token, "the parent's connection still works"
    end

    # --- faults ---------------------------------------------------------------

    def test_a_process_killed_before_commit_leaves_the_committed_state
      name = unique_name("killed")
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 100, ttl: 10)
      before = authority.checkpoint
      reader, writer = IO.pipe
      pid = fork_child do
        reader.close
        hook = lambda do |_commit|
          writer.write("L")
          writer.flush
          sleep
        end
        new_store(before_commit: hook).authority(name).reacquire(owner: 1, now: 105, ttl: 10)
      end
      writer.close
      assert_equal "L", read_within(reader, 1), "the child reached the point just before COMMIT"
      Process.kill(:KILL, pid)
      status = wait_child(pid)
      assert_predicate status, :signaled?

      assert_equal before, new_store.authority(name).checkpoint, "the killed transaction left no trace"
      grant = authority.reacquire(owner: 1, now: 106, ttl: 10)
      assert_equal 2, grant.lease.token, "the next grant still gets a greater token"
    ensure
      reader&.close
    end

    def test_first_use_of_a_resource_from_many_processes_at_once
      name = unique_name("first-touch")
      gate_reader, gate_writer = IO.pipe
      results_reader, results_writer = IO.pipe
      pids = Array.new(4) do |index|
        fork_child do
          gate_writer.close
          results_reader.close
          store = new_store
          gate_reader.read # every child starts when the parent closes the gate
          decision = store.authority(name).acquire(owner: index, now: 50, ttl: 10)
          results_writer.puts([decision.status, decision.lease&.token, decision.reason].join(","))
        end
      end
      gate_reader.close
      results_writer.close
      sleep 0.2
      gate_writer.close
      pids.each { |pid| assert_child_succeeded(pid) }
      results = results_reader.read.lines.map(&:chomp).sort
      assert_equal ["granted,1,", "rejected,,occupied", "rejected,,occupied", "rejected,,occupied"], results
      assert_equal 1, new_store.authority(name).checkpoint.last_issued
    ensure
      [gate_reader, gate_writer, results_reader, results_writer].each { |io| io&.close unless io&.closed? }
    end

    # Several processes hammer one resource on the store clock. Every decision
    # is logged by a before_commit hook in its own transaction, so the log is
    # in commit order; the log is then replayed against the invariants.
    def test_concurrent_processes_never_overlap_and_tokens_only_grow
      name = unique_name("contended")
      reports = Dir.mktmpdir("lease_machines_contended")
      log = with_contention_database do
        create_log_table
        pids = Array.new(CONTENDERS) do |index|
          fork_child { contend(name, index + 1, File.join(reports, "#{index + 1}.txt")) }
        end
        pids.each { |pid| assert_child_succeeded(pid, timeout: 60) }
        read_log(name)
      end
      assert_equal CONTENDERS * CONTENDED_DECISIONS, log.size, "every decision of every contender was logged"
      replay(log)
      warn "#{self.class.name}: #{log.size} contended decisions" if ENV["LEASE_MACHINES_VERBOSE"]
      returned = Dir[File.join(reports, "*.txt")].flat_map { |path| File.readlines(path, chomp: true) }
      committed = log.select { |entry| entry[:status] == "granted" }.map { |entry| "#{entry[:owner]}:#{entry[:token]}" }
      assert_equal committed.sort, returned.sort, "every returned grant was committed, and each exactly once"
    ensure
      FileUtils.rm_rf(reports) if reports
    end

    # --- schema ----------------------------------------------------------------

    def test_setup_is_idempotent_and_runs_the_shipped_sql
      store_class = new_store.class
      file = File.join(File.expand_path("../..", __dir__), Stores::Schema::FILES.fetch(engine))
      assert_equal File.read(file), store_class::SCHEMA_SQL,
                   "#{store_class}::SCHEMA_SQL must be the shipped #{file}"
      assert_same store_class::SCHEMA_SQL, store_class.schema_sql
      store = new_store
      2.times { assert_same store, store.setup! }
      assert_shipped_schema_installed
    end

    private

    CONTENDERS = 4
    # Each contender makes this many decisions, however long they take: a
    # deadline instead made the count depend on the machine (under qemu, 904
    # decisions in 8 s). Natively the 2,000 take well under two seconds.
    CONTENDED_DECISIONS = 500
    CONTENDED_TTL = 0.004

    # Where the contention test runs (an engine may pick a faster medium; see
    # the engine's test class). Yields and returns the block's value.
    def with_contention_database
      yield
    end

    def contend(name, owner, report_path)
      authority = new_store(before_commit: log_hook(owner)).authority(name)
      rng = Random.new(owner)
      token = nil
      File.open(report_path, "w") do |report|
        CONTENDED_DECISIONS.times do
          decision = contend_once(authority, owner, token, rng)
          report.puts("#{owner}:#{decision.lease.token}") if decision.granted?
          token = next_token(decision, token)
        end
      end
    end

    def contend_once(authority, owner, token, rng)
      roll = rng.rand
      if token.nil?
        return authority.reacquire(owner: owner, ttl: CONTENDED_TTL) if roll < 0.2

        return authority.acquire(owner: owner, ttl: CONTENDED_TTL)
      end
      return authority.renew(owner: owner, token: token, ttl: CONTENDED_TTL) if roll < 0.5
      return authority.release(owner: owner, token: token) if roll < 0.7
      return authority.reacquire(owner: owner, ttl: CONTENDED_TTL) if roll < 0.85

      authority.acquire(owner: owner, ttl: CONTENDED_TTL)
    end

    def next_token(decision, token)
      case decision.status
      when :granted then decision.lease.token
      when :renewed then token
      when :released then nil
      else %i[stale_token not_owner expired].include?(decision.reason) ? nil : token
      end
    end

    # Replays the commit-ordered log: the clock never goes back, granted tokens
    # strictly increase, a renewal or release comes from the live holder, and
    # no grant to one owner starts before another owner's lease has ended.
    def replay(log)
      current = nil
      highest = 0
      observed = 0
      tenures = []
      log.each do |entry|
        assert_operator entry[:observed_ns], :>=, observed, "the committed clock never goes back"
        observed = entry[:observed_ns]
        current, highest = replay_entry(entry, current, highest, tenures)
      end
      assert_operator tenures.size, :>=, 10, "the run must hand the resource over many times"
      assert_disjoint(tenures, current)
    end

    def replay_entry(entry, current, highest, tenures)
      case entry[:status]
      when "granted"
        assert_operator entry[:token], :>, highest, "granted tokens are unique and increase in commit order"
        if current && current[:owner] != entry[:owner]
          assert_operator current[:expires_at_ns], :<=, entry[:observed_ns], "a grant while another owner held"
        end
        tenures << current.merge(until_ns: [current[:expires_at_ns], entry[:observed_ns]].min) if current
        [entry, entry[:token]]
      when "renewed"
        assert_live_holder(current, entry)
        assert_operator entry[:expires_at_ns], :>=, current[:expires_at_ns], "renewal never shortens"
        [current.merge(expires_at_ns: entry[:expires_at_ns]), highest]
      when "released"
        assert_live_holder(current, entry)
        tenures << current.merge(until_ns: entry[:observed_ns])
        [nil, highest]
      else [current, highest]
      end
    end

    def assert_live_holder(current, entry)
      refute_nil current, "#{entry[:status]} with no lease"
      assert_equal current[:owner], entry[:owner]
      assert_operator entry[:observed_ns], :<, current[:expires_at_ns], "#{entry[:status]} after expiry"
      assert_equal current[:token], entry[:token] if entry[:token]
    end

    def assert_disjoint(tenures, current)
      tenures += [current.merge(until_ns: current[:expires_at_ns])] if current
      tenures.each_cons(2) do |earlier, later|
        next if earlier[:owner] == later[:owner]

        assert_operator earlier[:until_ns], :<=, later[:observed_ns], "two owners held at once: #{earlier} #{later}"
      end
    end
  end
end
