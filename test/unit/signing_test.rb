# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"
require "openssl"

module LeaseMachines
  # Signed tokens without a database: the proof a store attaches to a lease
  # (HMAC-SHA256, computed by the Rust core) against an independent
  # implementation (Ruby's OpenSSL), the keys' arguments, and a signed Lease
  # as a value object.
  class SigningTest < Minitest::Test
    include ValueAssertions

    COUNTING_KEY = (0..31).map(&:chr).join.b
    DOMAIN = "lease-machines grant proof v2\0".b

    # The documented message (docs/FENCES.md, "Signed tokens"), built here by
    # hand: prefix, u64 big-endian length, the name's bytes, u64 big-endian
    # token, u64 big-endian owner.
    def signed_message(resource, token, owner)
      DOMAIN + [resource.bytesize].pack("Q>") + resource.b + [token, owner].pack("Q>Q>")
    end

    def openssl_proof(key, resource, token, owner)
      OpenSSL::HMAC.hexdigest("SHA256", key, signed_message(resource, token, owner))
    end

    def keys(*list) = Signing::Keys.from(list)

    def test_the_documented_vectors
      # Also in core/tests/proof.rs and docs/FENCES.md; computed with Python's
      # hmac module and `openssl dgst -sha256 -mac HMAC`.
      vectors = [
        [COUNTING_KEY, "reports/nightly", 1, 7, "9d0f53392b0398953b2a9248c0f6b43ff899899323b1bb27ed598877fc8a1edf"],
        [COUNTING_KEY, "reports/nightly", 1, 12, "1e2a5423fdbbfd56e967fc13ce0dfdd0cb0a2f41fc20d0be05b5078c07e3b77c"],
        [COUNTING_KEY, "reports/nightly", (2**64) - 1, (2**64) - 1,
         "90ed9c03d5b1ed64dca38a24ee1d38f7455777b5d36d48a601413a1089cba457"],
        [COUNTING_KEY, "café/📈", 2**63, 0, "8595dccfd87035d78ac4c6d10889b207ebd8d495408bb760724ae1d863e29c34"],
        ["a signing key of exactly 32 byte", "r", 42, 2**63,
         "beb109ef9aee7a1b0bbd154560ab124c5344fa14974273d08752f97c1799d33f"]
      ]
      vectors.each do |key, resource, token, owner, expected|
        assert_equal expected, keys(key).sign(resource, token, owner)
        assert_equal expected, openssl_proof(key, resource, token, owner)
      end
    end

    def test_a_proof_of_the_first_form_verifies_for_no_owner
      # 0.3's proof (v1: "lease-machines token proof v1\0", no owner) of token 1 of "reports/nightly".
      v1 = "5bad28f307748b19858ad0a34f39c7a7f6157096b6b7c640c7adea989d697794"
      [0, 1, 7, (2**64) - 1].each do |owner|
        assert_equal :forged, keys(COUNTING_KEY).verify("reports/nightly", 1, owner, v1)
      end
    end

    def test_proofs_agree_with_openssl_for_random_inputs
      random = Random.new(13)
      iterations(200).times do
        key = random.bytes(32 + random.rand(100))
        resource = random.bytes(1 + random.rand(255)).force_encoding(Encoding::BINARY)
        token = 1 + random.rand((2**64) - 1)
        owner = random.rand(2**64)
        proof = keys(key).sign(resource, token, owner)

        assert_equal openssl_proof(key, resource, token, owner), proof
        assert_equal :valid, keys(key).verify(resource, token, owner, proof)
      end
    end

    def test_verify_refuses_what_the_keys_did_not_make
      signer = keys("k" * 32)
      proof = signer.sign("reports/nightly", 5, 7)

      assert_equal :valid, signer.verify("reports/nightly", 5, 7, proof)
      assert_equal :forged, signer.verify("reports/nightly", 6, 7, proof)
      assert_equal :forged, signer.verify("reports/weekly", 5, 7, proof)
      assert_equal :forged, signer.verify("reports/nightly", 5, 12, proof), "the same token granted to another owner"
      assert_equal :forged, keys("j" * 32).verify("reports/nightly", 5, 7, proof)
      flipped = proof.dup
      flipped[0] = flipped[0] == "0" ? "1" : "0"

      assert_equal :forged, signer.verify("reports/nightly", 5, 7, flipped)
      [proof.upcase, proof[0, 63], "#{proof}0", "", "g" * 64, "\xff".b * 64].each do |bad|
        assert_equal :malformed, signer.verify("reports/nightly", 5, 7, bad), bad.inspect
      end
    end

    def test_rotation_signs_with_the_first_key_and_verifies_with_any
      old_key = "o" * 32
      new_key = "n" * 40
      rotated = keys(new_key, old_key)
      by_old = keys(old_key).sign("r", 3, 4)

      assert_equal keys(new_key).sign("r", 3, 4), rotated.sign("r", 3, 4)
      assert_equal :valid, rotated.verify("r", 3, 4, by_old)
      assert_equal :forged, keys(new_key).verify("r", 3, 4, by_old)
      assert_equal 2, rotated.size
    end

    def test_keys_never_show_their_bytes
      secret = "a very secret signing key, 40 bytes long"
      list = keys(secret, "k" * 32)

      assert_equal "#<LeaseMachines::Signing::Keys (2 keys, not shown)>", list.inspect
      assert_predicate list, :frozen?
      refute_includes list.instance_variables.map { |name| list.instance_variable_get(name).inspect }.join, secret
      assert_raises(TypeError) { Marshal.dump(list) }
    end

    def test_a_key_is_its_bytes_whatever_the_encoding
      utf8 = "é" * 16 # 32 bytes
      assert_equal keys(utf8.b).sign("r", 1, 2), keys(utf8).sign("r", 1, 2)
    end

    def test_a_signed_lease_is_a_value
      proof = keys("k" * 32).sign("r", 1, 7)
      signed = Lease.new(owner: 7, token: 1, expires_at: 15, proof: proof)

      assert_equal proof, signed.proof
      assert_nil lease.proof
      assert_value_semantics(signed, Lease.exact(owner: 7, token: 1, expires_at_ns: 15_000_000_000, proof: proof),
                             lease, Lease.new(owner: 7, token: 1, expires_at: 15, proof: proof.tr("0-9", "a")))
      assert_predicate signed, :frozen?
      assert_same signed, signed.dup
      assert_same signed, signed.clone
      assert_equal signed, Marshal.load(Marshal.dump(signed))
      assert_equal lease, Marshal.load(Marshal.dump(lease))
      decision = Decision.new(status: :granted, lease: signed)

      assert_equal decision, Marshal.load(Marshal.dump(decision))
      assert_equal proof, Marshal.load(Marshal.dump(decision)).lease.proof
      assert_equal({ owner: 7, token: 1, expires_at: 15, proof: proof }, signed.to_h)
      assert_equal "#<LeaseMachines::Lease owner=7 token=1 expires_at=15.0 proof=#{proof.inspect}>", signed.inspect
      assert_equal signed.inspect, signed.to_s
      assert_equal "#<LeaseMachines::Lease owner=7 token=1 expires_at=15.0>", lease.inspect
      case signed
      in { proof: String => shown } then assert_equal proof, shown
      end
    end
  end
end
