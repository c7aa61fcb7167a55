# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Signed tokens: the arguments refused, with ill-typed calls on purpose
  # (left out of `rake rbs:test`, see rakelib/rbs.rake).
  class SigningArgumentsTest < Minitest::Test
    def test_bad_keys_are_refused_naming_the_argument_never_the_key
      secret = "s3cr3t-but-too-short"
      cases = {
        secret => [TypeError, "signing_keys must be an Array of secret keys (Strings), got a String " \
                              "(put one key in an Array: [key])"],
        [] => [ArgumentError, "signing_keys must hold at least one key, got an empty Array"],
        [secret] => [ArgumentError, "signing_keys[0] must have at least 32 bytes, got a String of 20 bytes"],
        ["k" * 32, "k" * 31] => [ArgumentError, "signing_keys[1] must have at least 32 bytes, got a String of 31 bytes"],
        ["k" * 32, :"#{secret}"] => [TypeError, "signing_keys[1] must be a String (the key's bytes), got Symbol"],
        { key: secret } => [TypeError, "signing_keys must be an Array of secret keys (Strings), got Hash"],
        1 => [TypeError, "signing_keys must be an Array of secret keys (Strings), got Integer"]
      }
      cases.each do |value, (error_class, message)|
        error = assert_raises(error_class) { Signing::Keys.from(value) }

        assert_equal message, error.message
        refute_includes error.message, secret
      end
      assert_nil Signing::Keys.from(nil)
    end

    def test_a_lease_proof_must_have_a_proof_form
      ["A" * 64, "a" * 63, "", "not a proof"].each do |bad|
        error = assert_raises(ArgumentError) { Lease.new(owner: 7, token: 1, expires_at: 15, proof: bad) }

        assert_equal "proof must be 64 lowercase hexadecimal digits (an HMAC-SHA256), got #{bad.inspect}", error.message
      end
      [1, :a, ["a" * 64]].each do |bad|
        error = assert_raises(TypeError) { Lease.exact(owner: 7, token: 1, expires_at_ns: 15, proof: bad) }

        assert_equal "proof must be a String, got #{bad.inspect}", error.message
      end
    end
  end
end
