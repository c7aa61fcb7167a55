# frozen_string_literal: true

module LeaseMachines
  # Holder labels (docs/STORES.md, "Holder labels"), the same on every
  # engine and Stores::Memory (run by StoreContractInProcess). An including
  # class provides `raw_label(name)` (the label column as stored) and
  # `write_raw_label(name, label)` (a hand edit of it).
  module HolderLabelCases
    HOSTILE = %(<script>alert("x")</script> 'O''Brien' é ✓ \\ %s $1 ?)

    def test_a_grant_writes_the_label_a_renewal_keeps_it_a_release_clears_it
      name = unique_name("label")
      authority = new_store.authority(name)
      token = authority.acquire(owner: 1, now: 100, ttl: 10, label: "web-1 pid 4242").lease.token
      assert_equal "web-1 pid 4242", new_store.status(name).label
      assert_equal "web-1 pid 4242", new_store.statuses.find { |status| status.name == name }.label

      # A renewal writes only its own columns: a label edited by hand between
      # the grant and the renewal is still there after it.
      write_raw_label(name, "edited by hand")
      assert_equal :renewed, authority.renew(owner: 1, token: token, now: 101, ttl: 10).status
      assert_equal "edited by hand", raw_label(name), "a renewal must not rewrite the label"

      assert_predicate authority.release(owner: 1, token: token, now: 102), :released?
      assert_nil raw_label(name)
      assert_nil new_store.status(name).label
    end

    def test_another_owners_grant_replaces_the_label_and_a_refusal_keeps_it
      name = unique_name("label")
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 100, ttl: 10, label: "first")
      refused = authority.acquire(owner: 2, now: 105, ttl: 10, label: "second")
      assert_equal :occupied, refused.reason
      assert_equal "first", new_store.status(name).label, "a refused grant leaves the holder's label"

      # Past the first lease's deadline: the refused renewal records the
      # clock, the lease record (and its label) stay.
      assert_predicate authority.renew(owner: 1, token: 1, now: 111, ttl: 10), :rejected?
      assert_equal "first", new_store.status(name).label

      assert_predicate authority.acquire(owner: 2, now: 112, ttl: 10, label: "second"), :granted?
      assert_equal "second", new_store.status(name).label
      assert_predicate authority.acquire(owner: 3, now: 200, ttl: 10), :granted?
      assert_nil new_store.status(name).label, "a grant without a label keeps none of the last holder's"
    end

    def test_reacquire_writes_its_label_and_force_release_clears_it
      name = unique_name("label")
      store = new_store
      authority = store.authority(name)
      authority.acquire(owner: 1, now: 100, ttl: 10, label: "before restart")
      assert_equal 2, authority.reacquire(owner: 1, now: 101, ttl: 10, label: "after restart").lease.token
      assert_equal "after restart", store.status(name).label
      assert_equal "after restart", store.force_release(name).label, "the status before the release"
      assert_nil store.status(name).label
      assert_nil raw_label(name)
    end

    def test_the_label_is_written_in_the_hooks_transaction_too
      name = unique_name("label")
      seen = []
      store = new_store(before_commit: ->(commit) { seen << commit.decision.status })
      store.authority(name).acquire(owner: 1, now: 100, ttl: 10, label: "hooked")
      assert_equal [:granted], seen
      assert_equal "hooked", store.status(name).label
    end

    # Nothing is decided on a label: one label, two holders.
    def test_two_owners_with_one_label_are_two_holders
      name = unique_name("label")
      authority = new_store.authority(name)
      grant = authority.acquire(owner: 1, now: 100, ttl: 10, label: "same words")
      assert_equal :occupied, authority.acquire(owner: 2, now: 101, ttl: 10, label: "same words").reason
      assert_equal :not_owner, authority.renew(owner: 2, token: grant.lease.token, now: 102, ttl: 10).reason
      refused = authority.release(owner: 2, token: grant.lease.token, now: 103)
      refute_predicate refused, :released?
      assert_equal 1, new_store.status(name).lease.owner
    end

    def test_a_label_is_kept_byte_for_byte
      name = unique_name("label")
      longest = "é" * 100 # 200 bytes
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 100, ttl: 10, label: HOSTILE)
      assert_equal HOSTILE, new_store.status(name).label
      assert_equal Encoding::UTF_8, new_store.status(name).label.encoding
      authority.acquire(owner: 2, now: 200, ttl: 10, label: longest)
      assert_equal longest, new_store.status(name).label
      authority.acquire(owner: 3, now: 300, ttl: 10, label: "ascii".b)
      assert_equal "ascii", new_store.status(name).label
    end

    def test_a_bad_label_is_refused_before_anything_is_written
      name = unique_name("label")
      authority = new_store.authority(name)
      {
        TypeError => [[:web, "label must be a String or nil (the holder's own words), got :web (Symbol)"],
                      [42, "label must be a String or nil (the holder's own words), got 42 (Integer)"]],
        ArgumentError => [["", 'label must not be empty (nil: no label), got ""'],
                          ["x" * 201, "label must be at most 200 bytes, got 201 bytes: #{('x' * 60).inspect}..."],
                          ["é" * 101, "label must be at most 200 bytes, got 202 bytes: #{('é' * 60).inspect}..."],
                          ["web\n1", 'label must not contain control characters, got "web\n1"'],
                          ["nul\0", 'label must not contain control characters, got "nul\u0000"'],
                          ["\xFF", 'label must be valid UTF-8, got "\xFF"'],
                          ["caf\xE9".dup.force_encoding(Encoding::ISO_8859_1), /\Alabel must be UTF-8, got/]]
      }.each do |error, cases|
        cases.each do |label, message|
          %i[acquire reacquire].each do |operation|
            raised = assert_raises(error) { authority.public_send(operation, owner: 1, now: 100, ttl: 10, label: label) }
            message.is_a?(Regexp) ? assert_match(message, raised.message) : assert_equal(message, raised.message)
          end
        end
      end
      assert_nil new_store.status(name), "nothing was written"
    end
  end
end
