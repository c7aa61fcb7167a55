# frozen_string_literal: true

module LeaseMachines
  # Every argument of every entry point that takes an owner, a token or a time,
  # as a table the input-rule tests walk through.
  #
  # A slot builds a fresh subject (the object the call is made on, or nil for a
  # constructor), makes the call with the value under test in one argument and
  # valid values everywhere else, and snapshots the subject's whole state so a
  # test can check that a call that raised changed nothing. The valid values
  # are chosen so that the call *would* change the subject if it went through
  # (a later `now`, a renewal, a newer token).
  module EntryPoints
    # `label` names the entry point and, as its last word, the argument.
    Slot = Struct.new(:label, :kind, :valid, :subject, :call, :snapshot, keyword_init: true) do
      def name = label.split.last.delete_suffix(":")
      def to_s = label
    end

    # Kinds: :owner (0..2**64-1), :presented (a token to check: 0..2**64-1),
    # :issued (1..2**64-1), :optional (nil or 1..2**64-1), :time (seconds),
    # :nanos (an exact instant in Integer nanoseconds).
    KINDS = %i[owner presented issued optional time nanos].freeze

    module_function

    def authority
      authority = Authority.new
      authority.acquire(owner: 7, now: 10, ttl: 5)
      authority
    end

    def authority_state(authority) = [authority.checkpoint, authority.clock_policy]

    def holder
      holder = Holder.new(token: 3, at: 0, cadence: Cadence.new(ttl: 30, renew_after: 10, warn_before: 5))
      holder.refresh(10)
      holder
    end

    def holder_state(holder) = [holder.state, holder.token, holder.confirmed_at, holder.warning_deadline]

    # `valid` is a value the argument accepts (and that, for a method that
    # changes its subject, does change it).
    # `subject:` builds the object the call is made on (none for a
    # constructor); `snapshot:` captures its whole state.
    def slot(label, kind, valid, call, **subject)
      Slot.new(label: label, kind: kind, valid: valid, call: call,
               subject: subject.fetch(:subject, -> {}), snapshot: subject.fetch(:snapshot, ->(_) { :stateless }))
    end

    def authority_slot(label, kind, valid, call)
      slot(label, kind, valid, call, subject: -> { authority }, snapshot: ->(a) { authority_state(a) })
    end

    def holder_slot(label, kind, valid, call)
      slot(label, kind, valid, call, subject: -> { holder }, snapshot: ->(h) { holder_state(h) })
    end

    def authority_slots
      [
        authority_slot("Authority#acquire owner:", :owner, 8, ->(a, v) { a.acquire(owner: v, now: 20, ttl: 5) }),
        authority_slot("Authority#acquire now:", :time, 20, ->(a, v) { a.acquire(owner: 8, now: v, ttl: 5) }),
        authority_slot("Authority#acquire ttl:", :time, 5, ->(a, v) { a.acquire(owner: 8, now: 20, ttl: v) }),
        authority_slot("Authority#reacquire owner:", :owner, 7, ->(a, v) { a.reacquire(owner: v, now: 11, ttl: 5) }),
        authority_slot("Authority#reacquire now:", :time, 11, ->(a, v) { a.reacquire(owner: 7, now: v, ttl: 5) }),
        authority_slot("Authority#reacquire ttl:", :time, 5, ->(a, v) { a.reacquire(owner: 7, now: 11, ttl: v) }),
        authority_slot("Authority#renew owner:", :owner, 7, ->(a, v) { a.renew(owner: v, token: 1, now: 11, ttl: 5) }),
        authority_slot("Authority#renew token:", :presented, 1, ->(a, v) { a.renew(owner: 7, token: v, now: 11, ttl: 5) }),
        authority_slot("Authority#renew now:", :time, 11, ->(a, v) { a.renew(owner: 7, token: 1, now: v, ttl: 5) }),
        authority_slot("Authority#renew ttl:", :time, 5, ->(a, v) { a.renew(owner: 7, token: 1, now: 11, ttl: v) }),
        authority_slot("Authority#release owner:", :owner, 7, ->(a, v) { a.release(owner: v, token: 1, now: 11) }),
        authority_slot("Authority#release token:", :presented, 1, ->(a, v) { a.release(owner: 7, token: v, now: 11) }),
        authority_slot("Authority#release now:", :time, 11, ->(a, v) { a.release(owner: 7, token: 1, now: v) })
      ]
    end

    def value_slots
      lease = -> { Lease.new(owner: 7, token: 1, expires_at: 15) }
      [
        slot("Lease.new owner:", :owner, 1, ->(_, v) { Lease.new(owner: v, token: 1, expires_at: 1) }),
        slot("Lease.new token:", :issued, 1, ->(_, v) { Lease.new(owner: 1, token: v, expires_at: 1) }),
        slot("Lease.new expires_at:", :time, 1, ->(_, v) { Lease.new(owner: 1, token: 1, expires_at: v) }),
        slot("Lease#expired? now", :time, 15, ->(l, v) { l.expired?(v) }, subject: lease, snapshot: ->(l) { l.to_h }),
        slot("Checkpoint.from_parts last_issued:", :optional, 1,
             ->(_, v) { Checkpoint.from_parts(last_issued: v, lease: nil, observed: 1) }),
        slot("Checkpoint.from_parts observed:", :time, 1,
             ->(_, v) { Checkpoint.from_parts(last_issued: 1, lease: nil, observed: v) })
      ] + exact_slots
    end

    # The constructors that take exact nanoseconds, as a store keeps them.
    def exact_slots
      [
        slot("Lease.exact owner:", :owner, 1, ->(_, v) { Lease.exact(owner: v, token: 1, expires_at_ns: 1) }),
        slot("Lease.exact token:", :issued, 1, ->(_, v) { Lease.exact(owner: 1, token: v, expires_at_ns: 1) }),
        slot("Lease.exact expires_at_ns:", :nanos, 1, ->(_, v) { Lease.exact(owner: 1, token: 1, expires_at_ns: v) }),
        slot("Checkpoint.exact last_issued:", :optional, 1,
             ->(_, v) { Checkpoint.exact(last_issued: v, lease: nil, observed_ns: 1) }),
        slot("Checkpoint.exact observed_ns:", :nanos, 1,
             ->(_, v) { Checkpoint.exact(last_issued: 1, lease: nil, observed_ns: v) })
      ]
    end

    def fence_slots
      fence = -> { Fence.new(highest: 3) }
      [
        slot("Fence.new highest:", :optional, 1, ->(_, v) { Fence.new(highest: v) }),
        slot("Fence#accept token", :presented, 4, ->(f, v) { f.accept(v) }, subject: fence, snapshot: ->(f) { f.highest })
      ]
    end

    def cadence_slots
      [
        slot("Cadence.new ttl:", :time, 9, ->(_, v) { Cadence.new(ttl: v, renew_after: 1, warn_before: 0) }),
        slot("Cadence.new renew_after:", :time, 1, ->(_, v) { Cadence.new(ttl: 9, renew_after: v, warn_before: 0) }),
        slot("Cadence.new warn_before:", :time, 0, ->(_, v) { Cadence.new(ttl: 9, renew_after: 1, warn_before: v) })
      ]
    end

    def holder_slots
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      [
        slot("Holder.new token:", :issued, 1, ->(_, v) { Holder.new(token: v, at: 0, cadence: cadence) }),
        slot("Holder.new at:", :time, 0, ->(_, v) { Holder.new(token: 1, at: v, cadence: cadence) }),
        holder_slot("Holder#renewal_due? at", :time, 10, ->(h, v) { h.renewal_due?(v) }),
        holder_slot("Holder#at_risk? at", :time, 25, ->(h, v) { h.at_risk?(v) }),
        holder_slot("Holder#refresh at", :time, 26, ->(h, v) { h.refresh(v) }),
        holder_slot("Holder#confirm token:", :presented, 3, ->(h, v) { h.confirm(token: v, at: 11) }),
        holder_slot("Holder#confirm at:", :time, 11, ->(h, v) { h.confirm(token: 3, at: v) }),
        holder_slot("Holder#reacquire token:", :presented, 4, ->(h, v) { h.reacquire(token: v, at: 11) }),
        holder_slot("Holder#reacquire at:", :time, 11, ->(h, v) { h.reacquire(token: 4, at: v) })
      ]
    end

    def all
      authority_slots + value_slots + fence_slots + cadence_slots + holder_slots
    end

    def of_kind(*kinds)
      all.select { |slot| kinds.include?(slot.kind) }
    end
  end
end
