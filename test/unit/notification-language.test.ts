import { notificationLanguage } from '../../src/domain/notifications/notification-texts';

describe('the language of a notification', () => {
  test.each([
    ['de', 'de'],
    ['de-AT', 'de'],
    ['de-CH', 'de'],
    ['en', 'en'],
    ['en-GB', 'en'],
    ['fr', 'en'],
    ['', 'en'],
    [null, 'en'],
  ])('when the customer locale is %p, then the texts are %p', (locale, language) => {
    expect(notificationLanguage(locale)).toBe(language);
  });
});
