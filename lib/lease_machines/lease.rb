# frozen_string_literal: true

module LeaseMachines
  # A grant: who holds the resource, under which fencing token, until when; a frozen value made by the extension.
  class Lease
    include ValueObject

    value_fields identity: %i[owner token expires_at_ns proof], shown: %i[owner token expires_at]

    alias shown_fields to_h
    alias shown_keys deconstruct_keys
    alias shown_text inspect
    private :shown_fields, :shown_keys, :shown_text

    def to_h = proof ? shown_fields.merge(proof: proof) : shown_fields

    def deconstruct_keys(keys) = shown_keys(keys).merge(proof: proof)

    def inspect = proof ? "#{shown_text.delete_suffix('>')} proof=#{proof.inspect}>" : shown_text
    alias to_s inspect

    def self.new(owner:, token:, expires_at:, proof: nil) = proven(_new(owner, token, expires_at), proof)

    def self.exact(owner:, token:, expires_at_ns:, proof: nil) = proven(_exact(owner, token, expires_at_ns), proof)

    def self.proven(lease, proof) = nil.equal?(proof) ? lease : lease.__send__(:_signed, proof)

    private_class_method :_new, :_exact, :proven

    def _dump(_level)
      text = "#{owner} #{token} #{expires_at_ns}"
      proof ? "#{text} #{proof}" : text
    end

    def self._load(text)
      fields = text.to_s.split
      proof = fields.pop if fields.size == 4
      owner, token, expires_at_ns = ValueObject.integers(fields.join(" "), 3)
      exact(owner: owner, token: token, expires_at_ns: expires_at_ns, proof: proof)
    end
  end
end
