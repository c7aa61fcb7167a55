# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Value objects survive Marshal exactly; a forged dump is refused.
  class MarshalTest < Minitest::Test
    def round_trip(value)
      Marshal.load(Marshal.dump(value)) # our own dump
    end

    def test_values_round_trip_through_marshal_exactly
      authority = Authority.new
      granted = authority.acquire(owner: U64_MAX, now: 0.1, ttl: 0.2)
      values = [granted, granted.lease, authority.checkpoint, authority.acquire(owner: 1, now: 0.2, ttl: 1),
                Decision::RELEASED, Authority.new.checkpoint,
                authority.renew(owner: U64_MAX, token: 1, now: 0.25, ttl: 1)]

      values.each do |value|
        copy = round_trip(value)

        assert_equal value, copy
        assert_predicate copy, :frozen?
        assert_instance_of value.class, copy
      end
      assert_equal 300_000_000, round_trip(granted.lease).expires_at_ns
      assert_same Decision::REJECTIONS.first, round_trip(Decision::REJECTIONS.first)
    end

    def test_a_restored_checkpoint_from_marshal_continues_the_history
      authority = Authority.new
      authority.acquire(owner: 7, now: 0, ttl: 30)
      restored = Authority.restore(round_trip(authority.checkpoint))

      assert_equal :occupied, restored.acquire(owner: 8, now: 29.999999999, ttl: 1).reason
      assert_equal 2, restored.acquire(owner: 8, now: 30, ttl: 1).lease.token
    end

    def test_tampered_marshal_data_is_refused
      dump = Marshal.dump(Checkpoint.exact(last_issued: 3, lease: nil, observed_ns: 5))
      forged = dump.sub("3 5", "0 5")

      assert_raises(RangeError) { Marshal.load(forged) } # rubocop:disable Security/MarshalLoad -- the point of the test
    end

    # Dumps made by earlier versions, byte for byte: the text format is kept.
    EARLIER_DUMPS = {
      "\x04\bIu:\x1ELeaseMachines::Checkpoint\x105 100 7 3 9\x06:\x06EF".b =>
        ["5 100 7 3 9", { last_issued: 5, lease: { owner: 7, token: 3, expires_at_ns: 9 }, observed_ns: 100 }],
      "\x04\bIu:\x1ELeaseMachines::Checkpoint\x0E- 0 - - -\x06:\x06ET".b =>
        ["- 0 - - -", { last_issued: nil, lease: nil, observed_ns: 0 }]
    }.freeze

    def test_a_checkpoint_dump_keeps_its_text_format
      EARLIER_DUMPS.each do |dump, (text, fields)|
        checkpoint = Marshal.load(dump) # rubocop:disable Security/MarshalLoad -- our own earlier dumps
        lease = fields[:lease] && Lease.exact(**fields[:lease])

        assert_equal Checkpoint.exact(last_issued: fields[:last_issued], lease: lease, observed_ns: fields[:observed_ns]),
                     checkpoint
        assert_equal text, checkpoint._dump(0)
        assert_equal dump, Marshal.dump(checkpoint)
      end
    end

    def test_a_half_given_lease_in_a_checkpoint_dump_is_refused
      dump = EARLIER_DUMPS.keys.first
      ["5 100 7 - 9", "5 100 - 3 9", "5 100 7 3 -", "5 100 - - 9", "5 100 7 - -"].each do |fields|
        forged = dump.sub("5 100 7 3 9", fields)

        assert_error(ArgumentError, "inconsistent checkpoint: a lease needs owner, token and expires_at, all or none") do
          Marshal.load(forged) # rubocop:disable Security/MarshalLoad -- the point of the test
        end
      end
      assert_error(ArgumentError, "inconsistent checkpoint: lease token 6 was never issued (last_issued is 5)") do
        Marshal.load(dump.sub("5 100 7 3 9", "5 100 7 6 9")) # rubocop:disable Security/MarshalLoad -- the point of the test
      end
      # A field of the wrong range is refused as Checkpoint.exact refuses it.
      assert_error(RangeError, /\Atoken must be an Integer in 1\.\.18446744073709551615 \(tokens start at 1\), got 0\z/) do
        Marshal.load(dump.sub("5 100 7 3 9", "5 100 7 0 9")) # rubocop:disable Security/MarshalLoad -- the point of the test
      end
    end
  end
end
