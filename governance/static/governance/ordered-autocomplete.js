/* Gavel: a configuration picked in an ordered autocomplete list (judges, fallbacks) goes to the end,
   so the order of the list is the order of picking (select2 would keep an old option in place). */
'use strict';
{
    const $ = window.django && window.django.jQuery;
    if ($) {
        $(document).on('select2:select', 'select.admin-autocomplete[multiple]', function (event) {
            const option = event.params && event.params.data && event.params.data.element;
            if (option && option.parentNode === this && option !== this.lastElementChild) {
                this.appendChild(option);
                $(this).trigger('change.select2');
            }
        });
    }
}
