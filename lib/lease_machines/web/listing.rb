# frozen_string_literal: true

module LeaseMachines
  class Web
    # The index's list: the store's resource names filtered by a name or a
    # glob ({NamePattern}), then one page of them, whose statuses alone are
    # read. A filter without glob characters keeps the names that contain it.
    class Listing
      # @return [String] the filter as given ("" for none)
      attr_reader :filter
      # @return [Integer] the page shown, from 1
      attr_reader :page
      # @return [Integer]
      attr_reader :pages
      # @return [Integer] resources in the store
      attr_reader :total
      # @return [Array<Stores::Status>] the filtered resources of the page shown
      attr_reader :statuses
      # @return [Integer] resources the filter kept
      attr_reader :matched
      # @return [Hash{String => StoreError}] rows of the page shown that cannot be read
      attr_reader :failures

      # @param names [Array<String>] every resource's name, ordered
      # @param page [String, nil] the `page` parameter
      # @yieldparam names [Array<String>] the names of the page shown
      # @yieldreturn [Array(Array<Stores::Status>, Hash{String => StoreError})]
      #   their statuses, and the rows that cannot be read
      def initialize(names, filter:, page:, per_page:)
        @filter = filter.to_s
        matcher = matcher(@filter)
        @total = names.size
        kept = matcher ? names.select(&matcher) : names
        @matched = kept.size
        @pages = [(kept.size + per_page - 1) / per_page, 1].max
        @page = Integer(page.to_s, 10, exception: false)&.clamp(1, @pages) || 1
        @statuses, @failures = yield(kept[(@page - 1) * per_page, per_page] || [])
      end

      private

      def matcher(filter)
        return nil if filter.empty?
        return NamePattern.new(filter).method(:match?) if NamePattern.glob?(filter)

        ->(name) { name.include?(filter) }
      end
    end
  end
end
