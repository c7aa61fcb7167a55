# frozen_string_literal: true

require_relative "fence_helper"
require "tempfile"

module LeaseMachines
  # Signed tokens (docs/FENCES.md, "Signed tokens"): a store with
  # `signing_keys:` attaches to each granted lease the proof of its token,
  # and a fence with the same keys, in any database, refuses a token without
  # a valid one: ForgedTokenError, the block not run, nothing written (not
  # even a fence row). Real stores in one database, real fences and data in
  # another: the cross-database story, where the fence cannot read the store.
  #
  # An including class provides `store(**options)` (a real store in another
  # database than the data), `new_fences(**options)`, `write(conn, name, body)`
  # and an engine's data module.
  module SignedFenceCases
    include FenceTestHelper

    KEY = "the store's signing key, 32 bytes+"
    OLD_KEY = "the key used before the rotation!"
    STRANGER = "a key that no store here ever used"

    def teardown
      @opened&.each(&:close)
      super
    end

    def opened(thing)
      (@opened ||= []) << thing
      thing
    end

    def grant(name, store_keys: [KEY])
      decision = opened(store(signing_keys: store_keys)).authority(name).acquire(owner: 7, ttl: 30)
      assert_predicate decision, :granted?
      decision.lease
    end

    def signed_fences(keys = [KEY])
      opened(new_fences(signing_keys: keys))
    end

    # Asserts that a guard showing `token` (and `proof:` and `owner:`, 7 as
    # `grant`'s, unless `lease` is given instead) is refused as forged for
    # `problem`, and that nothing was run or written.
    def assert_forged(fences, resource, token, problem, proof: nil, lease: nil, owner: 7)
      before = [fence_rows(resource), committed_mark_text(resource), committed_body(resource)]
      ran = false
      error = assert_raises(ForgedTokenError) do
        if lease
          fences.guard(resource, lease) { ran = true }
        else
          fences.guard(resource, token, proof: proof, owner: owner) { ran = true }
        end
      end
      refute ran, "the block of a refused guard does not run"
      assert_kind_of UnknownTokenError, error
      assert_equal [resource, token, problem, proof || lease&.proof], [error.resource, error.token, error.problem, error.proof]
      assert_includes error.message, resource.inspect
      assert_includes error.message, "token #{token}"
      assert_equal before, [fence_rows(resource), committed_mark_text(resource), committed_body(resource)],
                   "a refused token writes nothing"
      error
    end

    def test_a_signed_lease_passes_as_the_lease_or_as_token_and_proof
      name = unique_name("reports/nightly")
      lease = grant(name)
      fences = signed_fences

      assert_match(/\A[0-9a-f]{64}\z/, lease.proof)
      assert_equal :written, fences.guard(name, lease) { |conn| write(conn, name, "by 7") && :written }
      fences.guard(name, lease.token, proof: lease.proof, owner: lease.owner) { |conn| write(conn, name, "by 7, again") }

      assert_equal "by 7, again", committed_body(name)
      assert_equal lease.token, fences.highest(name)
    end

    def test_a_proof_needs_the_owner_it_signs
      name = unique_name
      lease = grant(name)
      error = assert_raises(ArgumentError) { signed_fences.guard(name, lease.token, proof: lease.proof) { flunk "ran" } }
      assert_equal "a signed token needs the owner its proof signs: pass the lease, or owner: with proof:", error.message
      assert_equal 0, fence_rows(name)
    end

    # The proof signs the grant (resource, token and owner): a token the
    # store issued twice (a failover that lost the first grant; played here
    # by a second store with the same key and a history of its own) has two
    # proofs, its second holder cannot pass for the first, and the fence,
    # which recorded the first holder, refuses the second as reissued.
    def test_a_reissued_token_has_another_proof_and_is_refused
      name = unique_name
      first = grant(name)
      reissued = opened(Stores::Memory.new(signing_keys: [KEY])).authority(name).acquire(owner: 12, ttl: 30).lease
      assert_equal first.token, reissued.token
      refute_equal first.proof, reissued.proof
      fences = signed_fences
      fences.guard(name, first) { |conn| write(conn, name, "by 7") }

      assert_forged(fences, name, reissued.token, :forged, proof: reissued.proof, owner: first.owner)
      error = assert_raises(ReissuedTokenError) { fences.guard(name, reissued) { flunk "ran" } }
      assert_equal [12, 7], [error.owner, error.recorded_owner]
      assert_equal "by 7", committed_body(name)
    end

    def test_a_token_without_a_proof_is_refused
      name = unique_name
      lease = grant(name)

      error = assert_forged(signed_fences, name, lease.token, :missing)
      assert_includes error.message, "carries no proof"
      assert_equal 0, fence_rows(name)
    end

    def test_an_unsigned_lease_is_refused
      name = unique_name
      unsigned = opened(store).authority(name).acquire(owner: 7, ttl: 30).lease
      assert_nil unsigned.proof

      assert_forged(signed_fences, name, unsigned.token, :missing, lease: unsigned)
    end

    def test_a_forged_or_malformed_proof_is_refused
      name = unique_name
      lease = grant(name)
      fences = signed_fences
      forged = lease.proof.tr("0-9a-f", "1-9a-f0")

      assert_forged(fences, name, lease.token, :forged, proof: forged)
      assert_forged(fences, name, lease.token, :malformed, proof: lease.proof.upcase)
      assert_forged(fences, name, lease.token, :malformed, proof: "")
    end

    def test_a_proof_for_another_resource_is_refused
      name = unique_name("reports/nightly")
      other = unique_name("reports/weekly")
      lease = grant(other)

      assert_forged(signed_fences, name, lease.token, :forged, proof: lease.proof)
    end

    def test_a_proof_for_another_token_cannot_brick_the_fence
      name = unique_name
      lease = grant(name)
      fences = signed_fences
      fences.guard(name, lease) { |conn| write(conn, name, "by the holder") }

      # The bricking case: a real proof beside a huge token. An unsigned
      # fence would take 2**64-1 and close the resource for good.
      assert_forged(fences, name, (2**64) - 1, :forged, proof: lease.proof)
      assert_forged(fences, name, lease.token + 1, :forged, proof: lease.proof)
      assert_equal lease.token, fences.highest(name)

      successor = opened(store(signing_keys: [KEY])).authority(name).acquire(owner: 12, ttl: 30, now: now_s + 60).lease
      fences.guard(name, successor) { |conn| write(conn, name, "by the successor") }
      assert_equal "by the successor", committed_body(name)
    end

    def test_a_signed_stale_token_is_still_fenced
      name = unique_name
      seven = grant(name)
      twelve = opened(store(signing_keys: [KEY])).authority(name).acquire(owner: 12, ttl: 30, now: now_s + 60).lease
      fences = signed_fences
      fences.guard(name, twelve) { |conn| write(conn, name, "by 12") }

      error = assert_fenced(name, seven.token, twelve.token) { fences.guard(name, seven) { flunk "ran" } }
      refute_kind_of UnknownTokenError, error
      assert_equal "by 12", committed_body(name)
    end

    def test_a_renewed_lease_carries_the_same_proof
      name = unique_name
      signing = opened(store(signing_keys: [KEY]))
      lease = signing.authority(name).acquire(owner: 7, ttl: 30).lease
      renewed = signing.authority(name).renew(owner: 7, token: lease.token, ttl: 60).lease

      assert_equal lease.proof, renewed.proof
      assert_predicate signing.authority(name).release(owner: 7, token: lease.token), :released?
    end

    def test_key_rotation
      name = unique_name
      before = grant(name, store_keys: [OLD_KEY])
      # The store now signs with the new key and still lists the old one; the
      # fence accepts both while leases signed before the rotation live.
      after = opened(store(signing_keys: [KEY, OLD_KEY])).authority(name).acquire(owner: 8, ttl: 30, now: now_s + 60).lease
      refute_equal before.proof, after.proof
      both = signed_fences([KEY, OLD_KEY])

      both.guard(name, before) { |conn| write(conn, name, "signed with the old key") }
      both.guard(name, after) { |conn| write(conn, name, "signed with the new key") }
      assert_equal "signed with the new key", committed_body(name)

      # Once the old key is dropped, its proofs are refused.
      new_only = signed_fences([KEY])
      assert_forged(new_only, name, before.token, :forged, lease: before)
      new_only.guard(name, after) { |conn| write(conn, name, "the new key alone") }
      assert_forged(signed_fences([STRANGER]), name, after.token, :forged, lease: after)
    end

    def test_an_unsigned_fence_ignores_proofs
      name = unique_name
      lease = grant(name)
      plain = opened(new_fences)

      plain.guard(name, lease) { |conn| write(conn, name, "unsigned fence, signed lease") }
      plain.guard(name, lease.token, proof: "not even a proof") { |conn| write(conn, name, "any proof") }
      assert_equal "any proof", committed_body(name)
      refute_predicate plain, :signed?
      assert_predicate signed_fences, :signed?
    end

    def test_token_zero_is_fenced_before_the_proof_is_asked_for
      name = unique_name
      assert_fenced(name, 0, nil) { signed_fences.guard(name, 0) { flunk "ran" } }
    end

    def test_a_lease_and_a_proof_together_are_refused
      name = unique_name
      lease = grant(name)
      error = assert_raises(ArgumentError) { signed_fences.guard(name, lease, proof: lease.proof) { flunk "ran" } }
      assert_includes error.message, "proof: is read from the lease"
      assert_equal 0, fence_rows(name)
    end

    def test_bad_signing_keys_are_refused_by_stores_and_fences_without_showing_them
      ill_typed!
      secret = "short secret"
      [[[secret], ArgumentError, "signing_keys[0] must have at least 32 bytes, got a String of 12 bytes"],
       [secret, TypeError, "signing_keys must be an Array of secret keys (Strings)"],
       [[], ArgumentError, "signing_keys must hold at least one key"]].each do |keys, error_class, message|
        [-> { store(signing_keys: keys) }, -> { new_fences(signing_keys: keys) }].each do |build|
          error = assert_raises(error_class, &build)
          assert_includes error.message, message
          refute_includes error.message, secret
        end
      end
      refute_includes opened(store(signing_keys: [KEY])).inspect, KEY
      refute_includes signed_fences.inspect, KEY
      lease = grant(unique_name)
      error = assert_raises(TypeError) do
        signed_fences.guard(unique_name, lease.token, proof: lease.proof.to_sym) { flunk "ran" }
      end
      assert_includes error.message, "proof must be nil or a String"
    end

    def now_s
      Process.clock_gettime(Process::CLOCK_REALTIME).floor
    end
  end
end
